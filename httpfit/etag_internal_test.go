package httpfit

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestNoneMatchComparesEntityTagsWeaklyAsRFC9110Says(t *testing.T) {
	const tag = `W/"abc"`
	tests := []struct {
		name  string
		lines []string
		want  bool
	}{
		{"no field matches nothing", nil, false},
		{"an empty field matches nothing", []string{""}, false},
		{"the same weak tag matches", []string{`W/"abc"`}, true},
		{"the same opaque tag, strong, matches: the comparison is weak", []string{`"abc"`}, true},
		{"another tag does not match", []string{`W/"abd"`}, false},
		{"a tag that only starts the same does not match", []string{`"ab"`}, false},
		{"* matches", []string{`*`}, true},
		{"* with white space matches", []string{" \t* "}, true},
		{"a list holding the tag matches", []string{`"x", W/"y",W/"abc"`}, true},
		{"a list without it does not", []string{`"x", W/"y"`}, false},
		{"the tag on a later field line matches", []string{`"x"`, `W/"abc"`}, true},
		{"empty list elements are allowed", []string{` , ,"abc" ,`}, true},
		{"a comma inside a tag is part of it", []string{`"a,abc"`}, false},
		{"an unquoted tag is not valid: nothing matches", []string{`abc`}, false},
		{"an unclosed tag is not valid", []string{`"abc`}, false},
		{"a lower-case w/ is not valid", []string{`w/"abc"`}, false},
		{"a space inside a tag is not valid", []string{`"a bc", "abc"`}, false},
		{"text after a tag is not valid", []string{`"abc" junk`}, false},
		{"a valid line does not save an invalid one", []string{`"abc"`, `junk`}, false},
		{"obs-text inside a tag is valid", []string{"\"\xe9\", \"abc\""}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, noneMatch(tt.lines, tag))
		})
	}
}

func TestTheETagWindowIsHalfTheCursorLifetime(t *testing.T) {
	at := func(sec int64) time.Time { return time.Unix(sec, 0) }
	tests := []struct {
		name string
		now  time.Time
		ttl  time.Duration
		want int64
	}{
		{"the start of the first window", at(0), 10 * time.Minute, 0},
		{"its last second", at(299), 10 * time.Minute, 0},
		{"the next window", at(300), 10 * time.Minute, 1},
		{"a fraction of a second does not count", at(299).Add(999 * time.Millisecond), 10 * time.Minute, 0},
		{"before 1970, the floor", at(-1), 10 * time.Minute, -1},
		{"a lifetime of a second gives windows of a second", at(7), time.Second, 7},
		{"no lifetime gives windows of a second", at(7), 0, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, etagWindow(tt.now, tt.ttl))
		})
	}
}

// FuzzNoneMatch checks the If-None-Match parser on any field value: it
// never panics, it matches only a field that holds "*" or the tag's
// opaque part, and a field that is the tag itself, or a list of valid tags
// that holds it, always matches.
func FuzzNoneMatch(f *testing.F) {
	for _, seed := range []string{``, `*`, `W/"abc"`, `"abc"`, `"x", W/"abc"`, ` , ,"abc",`, `"abc`, `w/"abc"`, `"a b"`, "\"\xe9\"", `"abc" junk`} {
		f.Add(seed, "abc")
	}
	f.Fuzz(func(t *testing.T, field, opaque string) {
		tag := `W/"` + opaque + `"`
		got := noneMatch([]string{field}, tag)
		if got && !strings.Contains(field, "*") && !strings.Contains(field, `"`+opaque+`"`) {
			t.Fatalf("%q matched %s without * or the tag", field, tag)
		}
		if !validOpaque(opaque) {
			return
		}
		assert.True(t, noneMatch([]string{tag}, tag), "a tag matches itself")
		assert.True(t, noneMatch([]string{`"other", ` + tag + ` ,`}, tag), "and in a list")
	})
}

// validOpaque reports whether s may stand between the quotes of an entity
// tag: etagc is %x21 / %x23-7E / obs-text.
func validOpaque(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c == '"' || c == 0x7f {
			return false
		}
	}
	return true
}
