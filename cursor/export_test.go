package cursor

import "crypto/cipher"

// Seal is a test seam: it seals an arbitrary plaintext exactly as Encode
// would (with c's signing key), so that tests can check what Decode does with
// payloads that carry a valid MAC but that Encode never writes. When iv is
// nil the synthetic IV of pt is used.
func Seal(c *Codec, version byte, iv, pt []byte) string {
	k := c.keys[0]
	raw := []byte{version}
	raw = append(raw, k.id[:]...)
	if iv == nil {
		raw = appendSIV(raw, &k.iv, pt)
	} else {
		raw = append(raw, iv...)
	}
	ct := make([]byte, len(pt))
	cipher.NewCTR(k.block, raw[headerLen:headerLen+ivLen]).XORKeyStream(ct, pt)
	raw = append(raw, ct...)
	raw = k.mac.appendSum(raw, raw)
	return b64.EncodeToString(raw)
}

// Plaintext returns the plaintext Encode would seal for p.
func Plaintext(p Payload, issued, ttl uint64) []byte {
	sp := sealOf(p)
	return appendPlaintext(nil, &sp, issued, ttl)
}

func sealOf(p Payload) sealed {
	f, _ := canonicalFilters(p.Filters)
	return sealed{Payload: p, subject: subjectDigest(p.Subject), query: queryDigest(p.Order, f)}
}

// PlaintextLen is the length Encode computes in advance for Plaintext.
func PlaintextLen(p Payload, issued, ttl uint64) int {
	sp := sealOf(p)
	return plaintextLen(&sp, issued, ttl)
}

// Wire layout constants, for tests that cut tokens apart.
const (
	HeaderLen = headerLen
	IVLen     = ivLen
	TagLen    = tagLen
	Overhead  = overhead
)
