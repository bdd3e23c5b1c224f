package summary

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Scores of the kinds of field, highest first. Fields one level down score
// nestedPenalty less, except identity fields, which are always kept.
const (
	scoreIdentity = 100
	scoreName     = 90
	scoreStatus   = 85
	scoreDate     = 75
	scoreAmount   = 70
	scoreCount    = 65
	scoreTopN     = 60
	scoreShort    = 40
	scoreMedium   = 30
	scoreList     = 30
	scoreLong     = 20
	scoreNull     = 10

	nestedPenalty = 30
	shortText     = 80 // runes: a string up to this long is a short scalar
	smallList     = 8  // elements: an array of scalars up to this long is a candidate
)

// candidate is one field that automatic selection may keep.
type candidate struct {
	section  int    // index of the top-level field
	sub      int    // index within the section's object, or -1 for the whole section
	path     string // dotted path
	value    *node  // the value kept (a truncated copy for long text)
	score    int
	identity bool
	complete bool // value is the field's whole value
}

// fieldWords splits a key into lower-case words: "checkInDate" gives
// check, in, date; "guest_id" gives guest, id; "userID" gives user, id.
// Words are slices of the key when they are lower case already; they are
// appended to words[:0].
func fieldWords(key string, words []string) []string {
	words = words[:0]
	start := -1 // byte offset of the current word
	var prev rune
	flush := func(end int) {
		if start >= 0 {
			w := key[start:end]
			if hasUpper(w) {
				w = strings.ToLower(w)
			}
			words = append(words, w)
			start = -1
		}
	}
	for i, r := range key {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush(i)
			prev = r
			continue
		case unicode.IsUpper(r) && start >= 0:
			next, _ := utf8.DecodeRuneInString(key[i+utf8.RuneLen(r):])
			nextLower := i+utf8.RuneLen(r) < len(key) && unicode.IsLower(next)
			if !unicode.IsUpper(prev) || nextLower {
				flush(i)
			}
		}
		if start < 0 {
			start = i
		}
		prev = r
	}
	flush(len(key))
	return words
}

func hasUpper(s string) bool {
	for _, r := range s {
		if r >= utf8.RuneSelf || r >= 'A' && r <= 'Z' {
			return true
		}
	}
	return false
}

func hasWord(words []string, set ...string) bool {
	for _, w := range words {
		if slices.Contains(set, w) {
			return true
		}
	}
	return false
}

func lastWord(words []string, set ...string) bool {
	return len(words) > 0 && slices.Contains(set, words[len(words)-1])
}

// isIdentityWords reports whether the words of a key name an identifier:
// id, uuid, key, slug, or a name ending in Id, _id, ID, Uuid, _uuid, Key or
// Slug.
func isIdentityWords(words []string) bool {
	return lastWord(words, "id", "uuid", "guid", "key", "slug")
}

// looksLikeDate reports whether s starts with an ISO 8601 date.
func looksLikeDate(s string) bool {
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	for _, i := range []int{0, 1, 2, 3, 5, 6, 8, 9} {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// scoreScalar scores a scalar field by the words of its name and its value.
func scoreScalar(words []string, v *node) int {
	switch {
	case v.kind == kindNull:
		return scoreNull
	case lastWord(words, "name", "title", "type", "kind"):
		return scoreName
	case hasWord(words, "status", "state"):
		return scoreStatus
	case lastWord(words, "date", "at", "time", "timestamp", "on", "day", "created", "updated", "until", "since", "expires", "expiry") ||
		v.kind == kindString && looksLikeDate(v.lit):
		return scoreDate
	case hasWord(words, "price", "total", "amount", "cost", "currency", "balance", "fee", "fees", "tax", "subtotal", "paid", "due", "discount", "deposit"):
		return scoreAmount
	case hasWord(words, "count", "num", "quantity", "qty", "nights", "guests", "progeny", "size"):
		return scoreCount
	case v.kind == kindString && utf8.RuneCountInString(v.lit) > shortText:
		return scoreMedium
	}
	return scoreShort
}

// isSmallList reports whether n is an array of at most smallList scalars
// short enough to keep whole.
func isSmallList(n *node) bool {
	if n.kind != kindArray || len(n.vals) > smallList {
		return false
	}
	for _, v := range n.vals {
		if !v.isScalar() || v.textLen() > shortText {
			return false
		}
	}
	return true
}

// isEmptyContainer reports whether n is {} or [].
func isEmptyContainer(n *node) bool {
	return (n.kind == kindArray || n.kind == kindObject) && len(n.vals) == 0
}

// candidates lists the fields of the object root that automatic selection
// may keep: scalars, small lists and arrays cut by a [TopN] rule, at the top
// level and one level down in objects. Strings longer than textLimit runes
// are cut (see truncateText).
func candidates(st *stopper, root *node, textLimit int, reduced map[*node]bool) ([]candidate, error) {
	cs := make([]candidate, 0, len(root.keys))
	buf := make([]string, 0, 8) // the words of a key
	add := func(section, sub int, path, key string, v *node, depth int, marker string) {
		c := candidate{section: section, sub: sub, path: path, value: v, complete: true}
		var words []string
		if v.isScalar() {
			buf = fieldWords(key, buf)
			words = buf
		}
		switch {
		case reduced[v]:
			c.score = scoreTopN
			c.complete = false
		case isEmptyContainer(v):
			c.score = scoreShort
		case isSmallList(v):
			c.score = scoreList
		case v.kind == kindArray || v.kind == kindObject:
			return
		case (v.kind == kindString || v.kind == kindNumber) && isIdentityWords(words):
			c.score, c.identity = scoreIdentity, true
		case v.kind == kindString && utf8.RuneCountInString(v.lit) > textLimit:
			c.score = scoreLong
			c.value = &node{kind: kindString, lit: truncateText(v.lit, textLimit, marker)}
			c.complete = false
		default:
			c.score = scoreScalar(words, v)
		}
		if depth > 1 && !c.identity {
			c.score -= nestedPenalty
		}
		cs = append(cs, c)
	}
	for i, k := range root.keys {
		v := root.vals[i]
		if err := st.tick(); err != nil {
			return nil, err
		}
		if v.kind == kindObject && len(v.keys) > 0 && !reduced[v] {
			for j, sk := range v.keys {
				if err := st.tick(); err != nil {
					return nil, err
				}
				add(i, j, k+"."+sk, sk, v.vals[j], 2, k)
			}
			continue
		}
		add(i, -1, k, k, v, 1, k)
	}
	return cs, nil
}

// truncateText cuts s to at most limit runes at a word boundary and appends
// a marker that says how many characters were left out and which
// drill-down fields parameter fetches them:
//
//	… [1,234 more characters; fields=description]
func truncateText(s string, limit int, field string) string {
	cut := cutAtWord(s, limit)
	left := utf8.RuneCountInString(s[len(cut):])
	return cut + "… [" + groupThousands(left) + " more characters; fields=" + field + "]"
}

// cutAtWord returns the longest prefix of s of at most limit runes that ends
// at a word boundary (before a space), without trailing spaces or
// punctuation that would dangle; a single word longer than limit is cut
// inside. limit <= 0 gives "".
func cutAtWord(s string, limit int) string {
	if limit <= 0 {
		return ""
	}
	end, runes := 0, 0
	for end < len(s) && runes < limit {
		_, size := utf8.DecodeRuneInString(s[end:])
		end += size
		runes++
	}
	if end == len(s) {
		return s
	}
	cut := s[:end]
	if r, _ := utf8.DecodeRuneInString(s[end:]); !unicode.IsSpace(r) {
		if i := strings.LastIndexFunc(cut, unicode.IsSpace); i > 0 {
			cut = cut[:i]
		}
	}
	return strings.TrimRightFunc(cut, func(r rune) bool {
		return unicode.IsSpace(r) || r == ',' || r == ';' || r == ':'
	})
}

// groupThousands writes n with commas between groups of three digits.
func groupThousands(n int) string {
	s := strconv.Itoa(n)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	lead := len(s) % 3
	if lead > 0 {
		b.WriteString(s[:lead])
	}
	for i := lead; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// build returns the summary object holding the candidates cs[i] for i in
// idx (ascending, so in input order) and the paths kept.
func build(root *node, cs []candidate, idx []int) (*node, []string) {
	out := &node{kind: kindObject}
	paths := make([]string, 0, len(idx))
	var cur *node // the nested object being filled
	curSection := -1
	for _, i := range idx {
		c := cs[i]
		paths = append(paths, c.path)
		if c.sub < 0 {
			out.keys = append(out.keys, root.keys[c.section])
			out.vals = append(out.vals, c.value)
			curSection = -1
			continue
		}
		if c.section != curSection {
			cur = &node{kind: kindObject}
			out.keys = append(out.keys, root.keys[c.section])
			out.vals = append(out.vals, cur)
			curSection = c.section
		}
		cur.keys = append(cur.keys, root.vals[c.section].keys[c.sub])
		cur.vals = append(cur.vals, c.value)
	}
	return out, paths
}
