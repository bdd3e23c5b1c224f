package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
	"github.com/ctxfit/ctxfit/summary"
)

// demoSummary summarizes a verbose booking, prints tokens before and after
// and the drill-down link, and recovers the full object and the sections the
// summary left out through that link.
func demoSummary(w io.Writer, counter budget.Counter, b budget.Budget) error {
	full, err := json.Marshal(corpus.Booking())
	if err != nil {
		return err
	}
	s, err := summary.New(&summary.Options{Counter: counter, Budget: b})
	if err != nil {
		return err
	}
	res, err := s.Summarize(full, summary.Shape{Endpoint: "/api/v1/bookings/{id}"})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n== Summary: one verbose booking\n\n")
	fmt.Fprintf(w, "GET /api/v1/bookings/BK12345 returns %d tokens (%d bytes), over the %d-token threshold.\n",
		res.TokensBefore, len(full), b.Threshold)
	if !res.Summarized {
		fmt.Fprintln(w, "It fits the budget and passes through unchanged.")
		return nil
	}
	meta := res.Summary.Meta
	fmt.Fprintf(w, "Summary: %d tokens (%.0f%% fewer), identity and primary fields of an object with %d top-level fields:\n",
		res.TokensAfter, res.ReductionPercent, meta.TotalFields)
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, res.Summary.Summary, "  ", "  "); err == nil {
		fmt.Fprintf(w, "  %s\n", pretty.String())
	}
	if meta.DetailsAvailable == nil {
		return nil
	}
	link := meta.DetailsAvailable
	fmt.Fprintf(w, "Drill-down: %s with parameters %v\n", link.Endpoint, link.Parameters)
	sections := link.Parameters["fields"]
	if sections != "" {
		part, err := summary.ServeDetails(full, sections)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  ?fields=%s returns those sections whole: %d tokens.\n", sections, counter.Count(string(part)))
	}
	all, err := summary.ServeDetails(full, summary.FieldsAll)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  ?fields=all returns the full object: %d tokens, identical to the original: %v.\n",
		counter.Count(string(all)), bytes.Equal(all, full))
	if !bytes.Equal(all, full) {
		return fmt.Errorf("drill-down lost data: the full object differs from the original")
	}
	return nil
}
