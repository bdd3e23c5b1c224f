package main

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/gateway"
	"github.com/ctxfit/ctxfit/internal/demodata/bookings"
)

// responseSchema compiles the schema at pointer (e.g.
// "/components/schemas/BookingPage") of the served OpenAPI document.
func responseSchema(t *testing.T, doc []byte, pointer string) *jsonschema.Schema {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	require.NoError(t, c.AddResource("urn:openapi", inst))
	sch, err := c.Compile("urn:openapi#" + pointer)
	require.NoError(t, err)
	return sch
}

func validates(t *testing.T, sch *jsonschema.Schema, body []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	require.NoError(t, err)
	assert.NoError(t, sch.Validate(v))
}

func TestTheServerDescribesItsOwnAPIAtOpenAPIJSON(t *testing.T) {
	ts := start(t)
	resp, doc := get(t, ts, "/openapi.json")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))

	d, err := gateway.Parse(context.Background(), doc)
	require.NoError(t, err)
	assert.Equal(t, "3.1.0", d.OpenAPI)

	t.Run("every operation is a route the server serves", func(t *testing.T) {
		examples := map[string]string{"{id}": "BK00042", "{name}": "app"}
		ops, err := gateway.Operations(d, nil, nil)
		require.NoError(t, err)
		var ids []string
		for _, op := range ops {
			ids = append(ids, op.ID)
			target := op.Path
			for k, v := range examples {
				target = strings.ReplaceAll(target, k, v)
			}
			resp, _ := get(t, ts, target)
			assert.Equal(t, http.StatusOK, resp.StatusCode, "%s %s", op.Method, target)
		}
		assert.ElementsMatch(t, []string{"listBookings", "getBooking", "getLog", "health"}, ids)
	})

	paths := "/paths/~1api~1v1~1bookings"
	for _, c := range []struct{ name, target, pointer string }{
		{"a page of the list matches the list's schema", "/api/v1/bookings", paths + "/get/responses/200/content/application~1json/schema"},
		{"a filtered page matches it too", "/api/v1/bookings?status=pending&order=created_desc", paths + "/get/responses/200/content/application~1json/schema"},
		{"the whole list matches it, raw", "", paths + "/get/responses/200/content/application~1json/schema"},
		{"a booking's summary matches the detail's schema", "/api/v1/bookings/BK00042", paths + "~1{id}/get/responses/200/content/application~1json/schema"},
		{"a whole booking matches it too", "/api/v1/bookings/BK00042?fields=all", paths + "~1{id}/get/responses/200/content/application~1json/schema"},
		{"a chunk of the log matches the log's schema", "/api/v1/logs/app", "/paths/~1api~1v1~1logs~1{name}/get/responses/200/content/application~1json/schema"},
		{"a missing booking matches the error schema", "/api/v1/bookings/BK99999", "/components/schemas/Error"},
		{"a bad order matches the error schema", "/api/v1/bookings?order=sideways", "/components/schemas/Error"},
		{"a bad cursor matches the problem schema", "/api/v1/bookings?cursor=nope", "/components/schemas/Problem"},
		{"the liveness check matches its schema", "/healthz", "/paths/~1healthz/get/responses/200/content/application~1json/schema"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sch := responseSchema(t, doc, c.pointer)
			if c.target == "" {
				validates(t, sch, raw(t, "/api/v1/bookings"))
				return
			}
			_, body := get(t, ts, c.target)
			validates(t, sch, body)
		})
	}

	t.Run("the statuses are the API's", func(t *testing.T) {
		assert.Contains(t, string(doc), `"enum": ["`+strings.Join(bookings.Statuses, `", "`)+`"]`)
	})
}
