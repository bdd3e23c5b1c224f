package benchmarks

import (
	"math/rand/v2"
	"strings"
)

var words = strings.Fields(`the a of and to in is that for it as was with be by on not he this are or his
from at which but have an they you were her she there one all we their has been if more when will would
who so no out up into than them can only other new some could time these two may then first any like now
my such make over our even most me state after also made many did must before back see through way where
get much go well your know should down work year because come people just say each those take day good how
long right still own too find here thing give many server request response token budget context window
model agent cursor page chunk summary field record booking guest property price policy amenity review
latency throughput memory network protocol message session history tool result error retry timeout
international configuration documentation implementation responsibility approximately`)

// Prose returns English-like prose of about n bytes: sentences of common
// words in paragraphs separated by blank lines. The same n always gives the
// same bytes (the generator of ctxfit's internal corpus, which another
// module cannot import).
func Prose(n int) string {
	r := rand.New(rand.NewPCG(1, 1))
	var b strings.Builder
	for b.Len() < n {
		for s := 3 + r.IntN(5); s > 0; s-- {
			k := 6 + r.IntN(14)
			for w := 0; w < k; w++ {
				word := words[r.IntN(len(words))]
				if w == 0 {
					word = strings.ToUpper(word[:1]) + word[1:]
				}
				b.WriteString(word)
				switch {
				case w == k-1:
					b.WriteString([]string{". ", ". ", "? ", "! "}[r.IntN(4)])
				case r.IntN(9) == 0:
					b.WriteString(", ")
				default:
					b.WriteByte(' ')
				}
			}
		}
		b.WriteString("\n\n")
	}
	return b.String()
}
