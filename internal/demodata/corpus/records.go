package corpus

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// The records of the summary tests and the demo, generated deterministically:
// a verbose booking and an animal record with dozens of scored traits.

var loremWords = strings.Fields(`the apartment sits on a quiet street close to the river with
bright rooms tall windows a fully equipped kitchen and a balcony that looks over the old town
guests can walk to the market museums cafes and the tram stop within minutes while the
neighbourhood stays calm at night the building has a lift secure entry and bicycle storage`)

// lorem returns n words of deterministic filler text.
func lorem(rng *rand.Rand, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = loremWords[rng.IntN(len(loremWords))]
	}
	s := strings.Join(w, " ")
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// Booking returns a booking of more than 3,000 tokens: guest with
// address, priceBreakdown of 15 fields, propertyDetails of 20 fields, 30
// amenities, policies and a long description.
func Booking() map[string]any {
	rng := rand.New(rand.NewPCG(7, 11))
	price := map[string]any{}
	for i, k := range []string{"basePrice", "nightlyRate", "nights", "cleaningFee", "serviceFee", "occupancyTax",
		"cityTax", "vat", "discount", "weeklyDiscount", "petFee", "extraGuestFee", "securityDeposit", "subtotal", "total"} {
		price[k] = json.Number(fmt.Sprintf("%d.%02d", 20+i*37, i*7%100))
	}
	property := map[string]any{"propertyId": "PR789", "hostId": "HO4411"}
	for i, k := range []string{"name", "type", "street", "city", "region", "postalCode", "country", "latitude",
		"longitude", "bedrooms", "bathrooms", "beds", "maxGuests", "squareMeters", "floor", "yearBuilt", "checkInTime",
		"checkOutTime"} {
		property[k] = fmt.Sprintf("%s value %d %s", k, i, lorem(rng, 3))
	}
	amenities := make([]any, 30)
	for i := range amenities {
		amenities[i] = map[string]any{"code": fmt.Sprintf("AM%03d", i), "label": lorem(rng, 3), "details": lorem(rng, 20)}
	}
	policies := map[string]any{}
	for _, k := range []string{"cancellation", "houseRules", "pets", "smoking", "parties", "quietHours", "checkIn", "damage"} {
		policies[k] = lorem(rng, 40)
	}
	return map[string]any{
		"id":              "BK12345",
		"status":          "confirmed",
		"guestName":       "John Doe",
		"guestEmail":      "john@example.com",
		"guestPhone":      "+1-555-0100",
		"guest":           map[string]any{"guestId": "GU2201", "firstName": "John", "lastName": "Doe", "loyaltyTier": "gold", "notes": lorem(rng, 40), "address": map[string]any{"street": "1 Main St", "city": "Springfield", "region": "IL", "postalCode": "62701", "country": "US", "line2": "Apt 4", "county": "Sangamon", "timezone": "America/Chicago", "verified": true, "updatedAt": "2025-09-01T10:00:00Z"}},
		"checkInDate":     "2025-11-01",
		"checkOutDate":    "2025-11-05",
		"createdAt":       "2025-10-02T08:30:00Z",
		"totalPrice":      json.Number("1200.00"),
		"currency":        "USD",
		"guestCount":      2,
		"priceBreakdown":  price,
		"propertyId":      "PR789",
		"propertyDetails": property,
		"amenities":       amenities,
		"policies":        policies,
		"description":     lorem(rng, 1200),
	}
}

// Animal returns an animal record with 48 traits, each with an
// accuracy score, and contact details.
func Animal() map[string]any {
	rng := rand.New(rand.NewPCG(3, 5))
	traits := make([]any, 48)
	for i := range traits {
		traits[i] = map[string]any{
			"trait":       fmt.Sprintf("T%02d", i),
			"name":        fmt.Sprintf("Trait number %d", i),
			"value":       json.Number(fmt.Sprintf("%.3f", rng.Float64()*4-2)),
			"accuracy":    rng.IntN(100),
			"units":       "kg",
			"percentile":  rng.IntN(100),
			"description": lorem(rng, 14),
		}
	}
	return map[string]any{
		"LpnId":        "6401492020FLE249",
		"Sire":         "6401492019FLE124",
		"Dam":          "6401492018FLE039",
		"Breed":        "Dorper",
		"BreedGroup":   "Hair",
		"Status":       "CURRENT",
		"Gender":       "Female",
		"DateOfBirth":  "2020-02-14",
		"TotalProgeny": 12,
		"Contact":      map[string]any{"FarmName": "Flock Farm", "Phone": "555-0142", "Email": "flock@example.com", "ContactName": "Ann Shepherd"},
		"Traits":       traits,
		"Registration": map[string]any{"Society": "ADSA", "Number": "R-2020-77812", "Remarks": lorem(rng, 60)},
	}
}

var (
	logLevels  = []string{"INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"}
	logSources = []string{"http.server", "booking.service", "payment.gateway", "cache", "scheduler", "db.pool"}
)

// Log returns a generated application log of exactly lines lines, each
// ending in "\n": timestamped entries at several levels, and after some
// ERROR entries a multi-line Java-style stack trace whose continuation lines
// start with a tab.
func Log(lines int) string {
	rng := rand.New(rand.NewPCG(5, 8))
	var b strings.Builder
	n := 0
	for sec := 0; n < lines; sec++ {
		level := logLevels[rng.IntN(len(logLevels))]
		fmt.Fprintf(&b, "2026-11-21T%02d:%02d:%02d.%03dZ %-5s [%s] request_id=req-%06d %s\n",
			sec/3600%24, sec/60%60, sec%60, rng.IntN(1000), level, logSources[rng.IntN(len(logSources))],
			rng.IntN(1000000), strings.TrimSuffix(lorem(rng, 4+rng.IntN(12)), "."))
		n++
		if level == "ERROR" && rng.IntN(2) == 0 {
			frames := []string{
				"java.lang.IllegalStateException: booking " + fmt.Sprintf("BK%05d", rng.IntN(99999)) + " is locked",
				"\tat com.example.booking.BookingService.confirm(BookingService.java:214)",
				"\tat com.example.booking.BookingController.post(BookingController.java:88)",
				"\tat com.example.http.Router.dispatch(Router.java:131)",
				"Caused by: java.sql.SQLTransientException: lock wait timeout exceeded",
				"\tat com.example.db.Pool.acquire(Pool.java:57)",
				"\t... 12 more",
			}
			for _, f := range frames[:3+rng.IntN(len(frames)-2)] {
				if n == lines {
					break
				}
				b.WriteString(f)
				b.WriteByte('\n')
				n++
			}
		}
	}
	return b.String()
}
