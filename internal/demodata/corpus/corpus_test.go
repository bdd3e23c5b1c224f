package corpus_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
)

func TestGeneratorsAreDeterministicAndSized(t *testing.T) {
	for name, gen := range map[string]func(int) string{"json": corpus.JSON, "prose": corpus.Prose, "code": corpus.Code} {
		t.Run(name, func(t *testing.T) {
			a, b := gen(100<<10), gen(100<<10)
			assert.Equal(t, a, b)
			assert.GreaterOrEqual(t, len(a), 100<<10)
			assert.Less(t, len(a), 110<<10)
		})
	}
	assert.True(t, json.Valid([]byte(corpus.JSON(5000))))
}

func TestLogHasTheRequestedLinesAndStackTraces(t *testing.T) {
	log := corpus.Log(10000)
	assert.Equal(t, 10000, strings.Count(log, "\n"))
	assert.True(t, strings.HasSuffix(log, "\n"))
	assert.Contains(t, log, "\tat com.example.booking.BookingService.confirm")
	assert.Equal(t, log, corpus.Log(10000))
}

func TestRecordsAreDeterministic(t *testing.T) {
	a, _ := json.Marshal(corpus.Booking())
	b, _ := json.Marshal(corpus.Booking())
	assert.Equal(t, a, b)
	assert.Greater(t, len(a), 12000)
}
