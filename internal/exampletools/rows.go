package exampletools

import "strings"

// BookingRow is a booking of [ListBookings] flattened to primitive fields,
// the form that compact tabular encodings (TOON) write as one row: its
// tags, the one list of a booking, are joined by "; ".
type BookingRow struct {
	ID        string  `json:"id"`
	Status    string  `json:"status"`
	GuestName string  `json:"guestName"`
	Email     string  `json:"email"`
	CheckIn   string  `json:"checkInDate"`
	CheckOut  string  `json:"checkOutDate"`
	Total     float64 `json:"totalPrice"`
	Currency  string  `json:"currency"`
	Nights    int     `json:"nights"`
	Notes     string  `json:"notes"`
	Tags      string  `json:"tags"`
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
