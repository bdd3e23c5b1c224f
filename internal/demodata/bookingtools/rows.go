package bookingtools

import "strings"

// BookingRow is a booking of [ListBookings] flattened to primitive fields,
// the form that compact tabular encodings (TOON) write as one row: its
// tags, the one list of a booking, are joined by "; ".
//
// Every field but Tags is the booking's field of the same name.
type BookingRow struct {
	// ID is the booking's ID.
	ID string `json:"id"`
	// Status is the booking's Status.
	Status string `json:"status"`
	// GuestName is the booking's GuestName.
	GuestName string `json:"guestName"`
	// Email is the booking's Email.
	Email string `json:"email"`
	// CheckIn is the booking's CheckIn.
	CheckIn string `json:"checkInDate"`
	// CheckOut is the booking's CheckOut.
	CheckOut string `json:"checkOutDate"`
	// Total is the booking's Total.
	Total float64 `json:"totalPrice"`
	// Currency is the booking's Currency.
	Currency string `json:"currency"`
	// Nights is the booking's Nights.
	Nights int `json:"nights"`
	// Notes are the booking's Notes.
	Notes string `json:"notes"`
	// Tags are the booking's Tags joined by "; ".
	Tags string `json:"tags"`
}

// BookingRows returns the bookings of [ListBookings](status) as rows.
func BookingRows(status string) []BookingRow {
	items := ListBookings(status)
	rows := make([]BookingRow, len(items))
	for i, it := range items {
		rows[i] = BookingRow{
			ID: it.ID, Status: it.Status, GuestName: it.GuestName, Email: it.Email,
			CheckIn: it.CheckIn, CheckOut: it.CheckOut, Total: it.Total, Currency: it.Currency,
			Nights: it.Nights, Notes: it.Notes, Tags: strings.Join(it.Tags, "; "),
		}
	}
	return rows
}
