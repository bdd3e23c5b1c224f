package summary_test

import (
	"encoding/json"

	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
)

// The example data sets of the tests live in internal/demodata/corpus, shared with the
// demo: a verbose booking of more than 3,000 tokens and an animal record with
// 48 scored traits.

func verboseBooking() map[string]any { return corpus.Booking() }

func animalRecord() map[string]any { return corpus.Animal() }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
