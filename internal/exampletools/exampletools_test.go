package exampletools_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/exampletools"
)

func TestListBookingsFiltersByStatus(t *testing.T) {
	all := exampletools.ListBookings("")
	assert.Len(t, all, exampletools.BookingCount)
	confirmed := exampletools.ListBookings("confirmed")
	require.NotEmpty(t, confirmed)
	for _, b := range confirmed {
		assert.Equal(t, "confirmed", b.Status)
	}
	assert.Empty(t, exampletools.ListBookings("unknown"))
}

func TestGetBookingUsesTheIDAndRejectsAnEmptyOne(t *testing.T) {
	b, err := exampletools.GetBooking("BK00042")
	require.NoError(t, err)
	assert.Equal(t, "BK00042", b["id"])
	_, err = exampletools.GetBooking(" ")
	assert.ErrorContains(t, err, "exampletools:")
}

func TestReadLogServesTheOneLog(t *testing.T) {
	text, err := exampletools.ReadLog("")
	require.NoError(t, err)
	assert.Equal(t, exampletools.LogLines, strings.Count(text, "\n"))
	_, err = exampletools.ReadLog("other.log")
	assert.ErrorContains(t, err, exampletools.LogName)
}

func TestSearchBookingsCountsAllMatchesAndLimitsResults(t *testing.T) {
	all := exampletools.SearchBookings("", 0)
	assert.Equal(t, exampletools.BookingCount, all.Total)
	assert.Len(t, all.Results, exampletools.BookingCount)
	some := exampletools.SearchBookings("LOVELACE", 3)
	assert.Greater(t, some.Total, 3)
	assert.Len(t, some.Results, 3)
	for _, b := range some.Results {
		assert.Contains(t, b.GuestName, "Lovelace")
	}
	none := exampletools.SearchBookings("zzzz", 0)
	assert.Zero(t, none.Total)
	assert.NotNil(t, none.Results)
}

func TestBookingRowsAreTheBookingsFlattened(t *testing.T) {
	items, rows := exampletools.ListBookings("pending"), exampletools.BookingRows("pending")
	require.Len(t, rows, len(items))
	for i, it := range items {
		r := rows[i]
		assert.Equal(t, []string{it.ID, it.Status, it.GuestName, it.Email, it.CheckIn, it.CheckOut, it.Currency, it.Notes},
			[]string{r.ID, r.Status, r.GuestName, r.Email, r.CheckIn, r.CheckOut, r.Currency, r.Notes})
		assert.Equal(t, it.Total, r.Total)
		assert.Equal(t, it.Nights, r.Nights)
		assert.Equal(t, strings.Join(it.Tags, "; "), r.Tags)
	}
}
