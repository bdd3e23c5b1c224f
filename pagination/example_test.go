package pagination_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/cursor"
	"github.com/ctxfit/ctxfit/pagination"
)

// exampleCodec returns a codec with a fixed clock, so that the examples'
// cursors do not depend on the time they run. Real servers use a secret from
// crypto/rand or a secret store, and the default clock.
func exampleCodec() *cursor.Codec {
	secret := []byte("example-secret-example-secret-00") // 32 bytes
	now := func() time.Time { return time.Date(2025, 10, 15, 12, 0, 0, 0, time.UTC) }
	codec, err := cursor.NewCodec([][]byte{secret}, &cursor.Options{Now: now})
	if err != nil {
		panic(err)
	}
	return codec
}

type listing struct {
	ID   int    `json:"id"`
	City string `json:"city"`
}

func ExampleNewPager() {
	pager, err := pagination.NewPager(exampleCodec(), &pagination.Options{
		Budget:       budget.Budget{Threshold: 2000, HardCap: 6000},
		DefaultLimit: 20,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(pager.Budget().Threshold, pager.Budget().HardCap)
	limit, _ := pager.Limit(pagination.Request{})
	fmt.Println("default limit:", limit)
	_, err = pager.Limit(pagination.Request{Limit: 500})
	fmt.Println(err)
	// Output:
	// 2000 6000
	// default limit: 20
	// pagination: limit 500 exceeds the maximum of 200 (rule lte=200); request at most 200 items per page and follow nextCursor for the rest
}

func ExamplePaginate() {
	pager, err := pagination.NewPager(exampleCodec(), nil)
	if err != nil {
		panic(err)
	}
	listings := make([]listing, 5)
	for i := range listings {
		listings[i] = listing{ID: i + 1, City: "Lisbon"}
	}
	query := cursor.Binding{Scope: "list_listings", Order: "id_asc", Filters: json.RawMessage(`{"city":"Lisbon"}`)}

	// The client asks for two items at a time and follows nextCursor.
	req := pagination.Request{Limit: 2}
	for {
		page, err := pagination.Paginate(pager, listings, req, query)
		if err != nil {
			panic(err)
		}
		fmt.Printf("items %v, meta %+v, cursor given: %t\n", page.Items, page.Meta, page.NextCursor != "")
		if !page.Meta.HasMore {
			break
		}
		req.Cursor = page.NextCursor
	}

	// A short list comes back whole, without a cursor.
	page, _ := pagination.Paginate(pager, listings[:2], pagination.Request{}, query)
	b, _ := json.Marshal(page)
	fmt.Println(string(b))
	// Output:
	// items [{1 Lisbon} {2 Lisbon}], meta {TotalCount:5 PageSize:2 HasMore:true}, cursor given: true
	// items [{3 Lisbon} {4 Lisbon}], meta {TotalCount:5 PageSize:2 HasMore:true}, cursor given: true
	// items [{5 Lisbon}], meta {TotalCount:5 PageSize:1 HasMore:false}, cursor given: false
	// {"items":[{"id":1,"city":"Lisbon"},{"id":2,"city":"Lisbon"}],"nextCursor":null,"meta":{"totalCount":2,"pageSize":2,"hasMore":false}}
}

func ExamplePaginateSource() {
	pager, err := pagination.NewPager(exampleCodec(), nil)
	if err != nil {
		panic(err)
	}
	// A source reads one window of a list that lives elsewhere, such as a
	// SQL query with LIMIT and OFFSET and a COUNT(*).
	const total = 7
	src := func(ctx context.Context, offset, limit int) ([]listing, int, error) {
		fmt.Printf("  fetch offset=%d limit=%d\n", offset, limit)
		var items []listing
		for id := offset + 1; id <= min(offset+limit, total); id++ {
			items = append(items, listing{ID: id, City: "Porto"})
		}
		return items, total, nil
	}
	query := cursor.Binding{Scope: "list_listings", Subject: "tenant-42", Order: "id_asc"}

	req := pagination.Request{Limit: 3}
	for {
		page, err := pagination.PaginateSource(context.Background(), pager, src, req, query)
		if err != nil {
			panic(err)
		}
		fmt.Printf("items %v, hasMore %t\n", page.Items, page.Meta.HasMore)
		if !page.Meta.HasMore {
			break
		}
		req.Cursor = page.NextCursor
	}
	// Output:
	//   fetch offset=0 limit=3
	// items [{1 Porto} {2 Porto} {3 Porto}], hasMore true
	//   fetch offset=3 limit=3
	// items [{4 Porto} {5 Porto} {6 Porto}], hasMore true
	//   fetch offset=6 limit=3
	// items [{7 Porto}], hasMore false
}

func ExamplePager_PaginateJSON() {
	pager, err := pagination.NewPager(exampleCodec(), nil)
	if err != nil {
		panic(err)
	}
	// Output of some handler: the elements are paged without being decoded.
	data := []byte(`[{"id": 1, "price": 1.50}, {"id": 2, "price": 2.00}, {"id": 3, "price": 3e2}]`)
	query := cursor.Binding{Scope: "GET /api/v1/prices"}

	page, err := pager.PaginateJSON(data, pagination.Request{Limit: 2}, query)
	if err != nil {
		panic(err)
	}
	for _, item := range page.Items {
		fmt.Println(string(item)) // the element's bytes, as written
	}
	fmt.Printf("%+v\n", page.Meta)

	page, err = pager.PaginateJSON(data, pagination.Request{Limit: 2, Cursor: page.NextCursor}, query)
	if err != nil {
		panic(err)
	}
	b, _ := json.Marshal(page) // compact, as counted against the budget
	fmt.Println(string(b))
	// Output:
	// {"id": 1, "price": 1.50}
	// {"id": 2, "price": 2.00}
	// {TotalCount:3 PageSize:2 HasMore:true}
	// {"items":[{"id":3,"price":3e2}],"nextCursor":null,"meta":{"totalCount":3,"pageSize":1,"hasMore":false}}
}
