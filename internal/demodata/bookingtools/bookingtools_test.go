package bookingtools_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/demodata/bookingtools"
)

func TestListBookingsFiltersByStatus(t *testing.T) {
	all := bookingtools.ListBookings("")
	assert.Len(t, all, bookingtools.BookingCount)
	confirmed := bookingtools.ListBookings("confirmed")
	require.NotEmpty(t, confirmed)
	for _, b := range confirmed {
		assert.Equal(t, "confirmed", b.Status)
	}
	assert.Empty(t, bookingtools.ListBookings("unknown"))
}

func TestGetBookingUsesTheIDAndRejectsAnEmptyOne(t *testing.T) {
	b, err := bookingtools.GetBooking("BK00042")
	require.NoError(t, err)
	assert.Equal(t, "BK00042", b["id"])
	_, err = bookingtools.GetBooking(" ")
	assert.ErrorContains(t, err, "bookingtools:")
}

func TestReadLogServesTheOneLog(t *testing.T) {
	text, err := bookingtools.ReadLog("")
	require.NoError(t, err)
	assert.Equal(t, bookingtools.LogLines, strings.Count(text, "\n"))
	_, err = bookingtools.ReadLog("other.log")
	assert.ErrorContains(t, err, bookingtools.LogName)
}

func TestSearchBookingsCountsAllMatchesAndLimitsResults(t *testing.T) {
	all := bookingtools.SearchBookings("", 0)
	assert.Equal(t, bookingtools.BookingCount, all.Total)
	assert.Len(t, all.Results, bookingtools.BookingCount)
	some := bookingtools.SearchBookings("LOVELACE", 3)
	assert.Greater(t, some.Total, 3)
	assert.Len(t, some.Results, 3)
	for _, b := range some.Results {
		assert.Contains(t, b.GuestName, "Lovelace")
	}
	none := bookingtools.SearchBookings("zzzz", 0)
	assert.Zero(t, none.Total)
	assert.NotNil(t, none.Results)
}

func TestBookingRowsAreTheBookingsFlattened(t *testing.T) {
	items, rows := bookingtools.ListBookings("pending"), bookingtools.BookingRows("pending")
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

func TestAnOperatorsEndpointWinsOverTheExamples(t *testing.T) {
	eps := bookingtools.WithEndpoints([]ctxfit.Endpoint{{Match: "get_booking", Threshold: 9000}, {Match: "read_log", Disabled: true}})
	assert.Equal(t, []ctxfit.Endpoint{{Match: "get_booking", Threshold: 9000}, {Match: "read_log", Disabled: true}}, eps)
	assert.Equal(t, bookingtools.Endpoints(), bookingtools.WithEndpoints(nil))
}
