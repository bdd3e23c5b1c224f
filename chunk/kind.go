package chunk

import (
	"fmt"
	"strings"
)

// Kind is what a text is: it decides which boundary levels the splitter
// uses (see [Kind.Levels]).
//
// The zero Kind, [KindAuto], asks for detection with [Detect].
type Kind string

// Kinds of text.
const (
	KindAuto      Kind = ""         // detect the kind with Detect
	KindProse     Kind = "prose"    // plain text: paragraphs, lines, sentences
	KindMarkdown  Kind = "markdown" // Markdown: sections under ATX headings, then as prose
	KindLog       Kind = "log"      // log output: entries with their continuation lines
	KindCode      Kind = "code"     // source code: blank-line blocks, lines
	KindJSONLines Kind = "jsonl"    // one JSON value per line
)

// kindSampleSize is how much of a text Detect reads.
const kindSampleSize = 64 << 10

// Level is a kind of boundary a chunk may end at. Smaller levels are
// better: the splitter ends a chunk at the best level at which any boundary
// fits (see the package documentation).
type Level uint8

// Boundary levels, best first.
const (
	// LevelEnd is the end of the text: the last chunk ends there.
	LevelEnd Level = iota
	// LevelSection is the start of a Markdown ATX heading line ("# Title",
	// up to three spaces of indentation, one to six '#'): the chunk ends
	// just before the heading.
	LevelSection
	// LevelParagraph is the start of the first non-blank line after one or
	// more blank lines (lines of only spaces, tabs and '\r'); the blank
	// lines stay with the paragraph before.
	LevelParagraph
	// LevelEntry is the start of a log line that begins an entry: a line
	// starting with a timestamp ("2026-01-02T15:04:05Z", "2026-01-02
	// 15:04:05,123", "Jan  2 15:04:05", "15:04:05") or a level ("INFO",
	// "[WARN]", "ERROR:"), optionally in brackets. Other lines (stack
	// frames, "Caused by:", indented lines) continue the entry before.
	LevelEntry
	// LevelLine is the position after a '\n'.
	LevelLine
	// LevelSentence is the position after '.', '!', '?' or '…' (and any
	// closing quotes or brackets) followed by white space, before that
	// space; or after '。', '！' or '？'.
	LevelSentence
	// LevelWord is the position where a run of ASCII white space starts
	// after a non-space byte: a chunk ends after a word and the next one
	// starts with the space, as tiktoken's pre-tokenizer splits.
	LevelWord
	// LevelGrapheme is a rune boundary that does not separate a combining
	// mark, variation selector, emoji modifier or tag from its base, does
	// not fall on either side of a zero-width joiner, and does not split
	// "\r\n". It is used only inside a word over the limit.
	LevelGrapheme
	// LevelRune is any boundary between two UTF-8 sequences (an invalid
	// byte counts as one). It is used only for a grapheme cluster over the
	// limit. No chunk ever splits a UTF-8 sequence.
	LevelRune
	numLevels
)

var levelNames = [numLevels]string{"end", "section", "paragraph", "entry", "line", "sentence", "word", "grapheme", "rune"}

// String returns the level's name, such as "paragraph".
func (l Level) String() string {
	if l < numLevels {
		return levelNames[l]
	}
	return fmt.Sprintf("Level(%d)", l)
}

var kindLevels = map[Kind][]Level{
	KindProse:     {LevelParagraph, LevelLine, LevelSentence, LevelWord, LevelGrapheme, LevelRune},
	KindMarkdown:  {LevelSection, LevelParagraph, LevelLine, LevelSentence, LevelWord, LevelGrapheme, LevelRune},
	KindLog:       {LevelEntry, LevelLine, LevelWord, LevelGrapheme, LevelRune},
	KindCode:      {LevelParagraph, LevelLine, LevelWord, LevelGrapheme, LevelRune},
	KindJSONLines: {LevelLine, LevelWord, LevelGrapheme, LevelRune},
}

// Levels returns the boundary levels the splitter uses for k, best first,
// after the end of the text, which is always best. [KindAuto] and unknown
// kinds have none. The slice is a copy.
func (k Kind) Levels() []Level {
	return append([]Level(nil), kindLevels[k]...)
}

// valid reports whether k is KindAuto or a known kind.
func (k Kind) valid() bool {
	_, ok := kindLevels[k]
	return ok || k == KindAuto
}

// Detect guesses the kind of text from its first 64 KiB:
//
//   - [KindJSONLines] when at least 80% of the non-blank lines are a JSON
//     object or array on one line;
//   - [KindLog] when at least a third of the non-blank lines start a log
//     entry (see [LevelEntry]);
//   - [KindCode] when at least half of the non-blank lines are indented or
//     end in one of ";{}()[],:" or start with a keyword such as "func",
//     "def", "import" or "#include", and there are at least three;
//   - [KindMarkdown] when a line is an ATX heading or a code fence ("```");
//   - [KindProse] otherwise, and for empty text.
//
// It is a heuristic: set [Options.Kind] when the kind is known.
func Detect(text string) Kind {
	if len(text) > kindSampleSize {
		text = text[:kindSampleSize]
	}
	var lines, jsonl, entries, code, headings int
	for len(text) > 0 {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		line = strings.TrimRight(line, "\r")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" {
			continue
		}
		lines++
		if (trimmed[0] == '{' && trimmed[len(trimmed)-1] == '}') || (trimmed[0] == '[' && trimmed[len(trimmed)-1] == ']' && len(trimmed) > 1 && !isLevelWord(trimmed[1:])) {
			jsonl++
		}
		if isEntryStart(line) {
			entries++
		}
		if isHeading(line) || strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			headings++
		}
		if isCodeLine(line, trimmed) {
			code++
		}
	}
	switch {
	case lines == 0:
		return KindProse
	case jsonl*5 >= lines*4:
		return KindJSONLines
	case entries*3 >= lines:
		return KindLog
	case lines >= 3 && code*2 >= lines:
		return KindCode
	case headings > 0:
		return KindMarkdown
	default:
		return KindProse
	}
}

var codeKeywords = []string{"func ", "def ", "class ", "import ", "package ", "#include", "return", "var ", "const ", "let ", "fn ", "pub ", "if ", "for ", "}"}

func isCodeLine(line, trimmed string) bool {
	if line[0] == '\t' || strings.HasPrefix(line, "  ") {
		return true
	}
	if strings.ContainsRune(";{}()[],:", rune(trimmed[len(trimmed)-1])) {
		return true
	}
	for _, k := range codeKeywords {
		if strings.HasPrefix(trimmed, k) {
			return true
		}
	}
	return false
}
