package ui_test

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/ui"
	"github.com/ctxfit/ctxfit/internal/ui/uitest"
)

// rule is one CSS rule: its selector and declarations.
type rule struct {
	selector string
	decls    map[string]string
}

// parseCSS reads the page's style sheet into the rules of each theme:
// "light" is every rule outside a prefers-color-scheme: dark block,
// "dark" those with the dark block's declarations over them. Other @media
// blocks (layout) belong to both. It reads only what app.css uses: flat
// rules, @media blocks one level deep, /* comments */.
func parseCSS(t *testing.T, css string) map[string][]rule {
	t.Helper()
	css = regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(css, "")
	var light, dark []rule
	var parse func(s string, into *[]rule)
	parse = func(s string, into *[]rule) {
		for {
			s = strings.TrimSpace(s)
			if s == "" {
				return
			}
			open := strings.IndexByte(s, '{')
			require.GreaterOrEqual(t, open, 0, "a rule without a block: %q", s)
			head := strings.TrimSpace(s[:open])
			if strings.HasPrefix(head, "@media") {
				depth, end := 0, -1
				for i := open; i < len(s) && end < 0; i++ {
					switch s[i] {
					case '{':
						depth++
					case '}':
						if depth--; depth == 0 {
							end = i
						}
					}
				}
				require.GreaterOrEqual(t, end, 0, "an @media block left open")
				if strings.Contains(head, "prefers-color-scheme: dark") {
					parse(s[open+1:end], &dark)
				} else {
					parse(s[open+1:end], into)
				}
				s = s[end+1:]
				continue
			}
			end := strings.IndexByte(s, '}')
			require.Greater(t, end, open, "a rule left open: %q", head)
			r := rule{selector: head, decls: map[string]string{}}
			for _, d := range strings.Split(s[open+1:end], ";") {
				name, value, ok := strings.Cut(d, ":")
				if ok {
					r.decls[strings.TrimSpace(name)] = strings.TrimSpace(value)
				}
			}
			for name := range r.decls {
				if short, ok := strings.CutSuffix(name, "-color"); ok && r.decls[short] != "" {
					t.Errorf("%s sets %s and %s: write one (a theme overrides the shorthand whole)", head, short, name)
				}
			}
			*into = append(*into, r)
			s = s[end+1:]
		}
	}
	parse(css, &light)
	require.NotEmpty(t, dark, "the style sheet has a dark theme")
	themed := slices.Clone(light)
	for i, r := range themed {
		themed[i].decls = maps.Clone(r.decls)
		for _, d := range dark {
			if d.selector == r.selector {
				for name, value := range d.decls {
					if short, ok := strings.CutSuffix(name, "-color"); ok && r.decls[short] != "" {
						t.Errorf("the dark %s sets %s over the shorthand %s: write the shorthand, so that the test measures what the browser paints", d.selector, name, short)
					}
					themed[i].decls[name] = value
				}
			}
		}
	}
	for _, d := range dark {
		if !slices.ContainsFunc(light, func(r rule) bool { return r.selector == d.selector }) {
			themed = append(themed, d)
		}
	}
	return map[string][]rule{"light": light, "dark": themed}
}

// hexColour matches the one colour notation the style sheet may use.
var hexColour = regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)

// colours are the colours of a declaration's value: its #hex tokens. A
// token that may be a colour in another notation fails t, so that no
// colour escapes the measure.
func colours(t *testing.T, sel, prop, value string) []string {
	t.Helper()
	var out []string
	for _, tok := range strings.Fields(value) {
		switch {
		case hexColour.MatchString(tok):
			out = append(out, strings.ToLower(tok))
		case regexp.MustCompile(`^[0-9.]+(px|rem|em|%)?$`).MatchString(tok),
			slices.Contains([]string{"none", "solid", "inherit", "transparent"}, tok):
		default:
			t.Errorf("%s { %s: %s }: %q may be a colour the test cannot measure; write colours as #rgb or #rrggbb", sel, prop, value, tok)
		}
	}
	return out
}

// luminance is the relative luminance of a #hex colour (WCAG 2.x).
func luminance(hex string) float64 {
	h := strings.TrimPrefix(hex, "#")
	if len(h) == 3 {
		h = string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]})
	}
	var c [3]float64
	for i := range c {
		v, _ := strconv.ParseUint(h[2*i:2*i+2], 16, 8)
		s := float64(v) / 255
		if s <= 0.04045 {
			c[i] = s / 12.92
		} else {
			c[i] = math.Pow((s+0.055)/1.055, 2.4)
		}
	}
	return 0.2126*c[0] + 0.7152*c[1] + 0.0722*c[2]
}

// contrast is the WCAG contrast ratio of two colours.
func contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}

func TestContrastIsMeasuredAsWCAGDefinesIt(t *testing.T) {
	assert.InDelta(t, 21, contrast("#000", "#fff"), 1e-9)
	assert.InDelta(t, 1, contrast("#777777", "#777"), 1e-9)
	assert.InDelta(t, 4.48, contrast("#777", "#fff"), 0.01, "the grey that just fails AA")
}

// TestTheColoursKeepTheirContrast measures, in each theme, every text
// colour (color, and fill for the chart's SVG text) against every
// background the page paints (WCAG AA: 4.5:1; the page has no large text
// that would allow 3:1), and every colour that marks a control or a
// graphic (the focus outline, the borders of form controls, the chart's
// line) against every background (3:1, WCAG 1.4.11). Every pair, not only
// those the page puts together today: a colour moved to another row or
// panel keeps its contrast. The borders of tables, panels and the chart's
// frame are decoration and not measured.
func TestTheColoursKeepTheirContrast(t *testing.T) {
	w := uitest.Get(ui.New(nil), "/ui/static/app.css", "")
	require.Equal(t, 200, w.Code)
	for theme, rules := range parseCSS(t, w.Body.String()) {
		t.Run("the "+theme+" theme", func(t *testing.T) {
			texts, backgrounds, marks := map[string]string{}, map[string]string{}, map[string]string{}
			control := regexp.MustCompile(`\b(input|select|button)\b`)
			for _, r := range rules {
				for prop, value := range r.decls {
					if slices.Contains([]string{"border-collapse", "border-spacing", "border-radius", "border-width", "border-style"}, prop) {
						continue // no colour
					}
					where := fmt.Sprintf("%s { %s }", r.selector, prop)
					switch {
					case prop == "color" || prop == "fill":
						for _, c := range colours(t, r.selector, prop, value) {
							texts[c] = where
						}
					case prop == "background" || prop == "background-color":
						for _, c := range colours(t, r.selector, prop, value) {
							backgrounds[c] = where
						}
					case prop == "outline" || prop == "outline-color" || prop == "stroke" ||
						(strings.HasPrefix(prop, "border") && control.MatchString(r.selector)):
						for _, c := range colours(t, r.selector, prop, value) {
							marks[c] = where
						}
					case strings.HasPrefix(prop, "border"):
						_ = colours(t, r.selector, prop, value) // decoration: read, not measured
					}
				}
			}
			require.NotEmpty(t, texts)
			require.NotEmpty(t, backgrounds)
			require.NotEmpty(t, marks)
			for _, pair := range []struct {
				kind string
				fg   map[string]string
				min  float64
			}{{"text", texts, 4.5}, {"control or graphic", marks, 3}} {
				for fg, fgAt := range pair.fg {
					for bg, bgAt := range backgrounds {
						ratio := contrast(fg, bg)
						assert.GreaterOrEqual(t, ratio, pair.min, "%s %s (%s) on %s (%s): %.2f:1", pair.kind, fg, fgAt, bg, bgAt, ratio)
					}
				}
			}
		})
	}
}
