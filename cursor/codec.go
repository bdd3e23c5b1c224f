package cursor

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"sync"
	"time"
)

// Defaults applied by [NewCodec] to zero [Options] fields.
const (
	DefaultTTL           = 10 * time.Minute
	DefaultSkew          = 30 * time.Second
	DefaultMaxTokenBytes = 4096
)

// MinSecretBytes is the shortest secret [NewCodec] accepts.
const MinSecretBytes = 32

// maxTTL bounds Options.TTL far below the overflow of time arithmetic.
const maxTTL = 100 * 365 * 24 * time.Hour

// Wire layout (before base64url): version, key ID, IV, ciphertext, tag.
const (
	version2   byte = 2
	versionLen      = 1
	keyIDLen        = 4
	ivLen           = aes.BlockSize // 16
	tagLen          = sha256.Size   // 32
	headerLen       = versionLen + keyIDLen
	overhead        = headerLen + ivLen + tagLen
	// minTokenLen is the base64 length of the shortest possible cursor.
	minTokenLen = (8*(overhead+minPlaintextLen) + 5) / 6
)

// HKDF parameters. Each secret yields four independent values; the info
// strings keep them apart and name the wire version they belong to.
const (
	hkdfSalt    = "ctxfit/cursor"
	infoEncKey  = "ctxfit/cursor v2 encryption key"
	infoIVKey   = "ctxfit/cursor v2 synthetic iv key"
	infoMACKey  = "ctxfit/cursor v2 mac key"
	infoKeyID   = "ctxfit/cursor v2 key id"
	encKeyBytes = 32 // AES-256
	macKeyBytes = 32
)

var b64 = base64.RawURLEncoding.Strict()

// Options configures a [Codec]. The zero value (or a nil *Options) gives the
// defaults listed with each field. [NewCodec] copies it; changing it later has
// no effect on the Codec.
type Options struct {
	// TTL is how long a cursor stays valid after it is issued. Zero means
	// [DefaultTTL] (10 minutes). It is rounded up to a whole second, the
	// resolution of the times sealed in a cursor. Each cursor seals its own
	// expiry, so a new TTL applies to cursors issued from then on. Negative,
	// or more than a century, is an error.
	TTL time.Duration
	// Skew is the clock difference tolerated between the servers that issue
	// and accept cursors: a cursor is accepted until Expires+Skew, and one
	// issued up to Skew in the future is accepted. Zero means [DefaultSkew]
	// (30 seconds); a negative value means no allowance at all.
	Skew time.Duration
	// MaxTokenBytes caps the length of a token, checked before any decoding:
	// [Codec.Decode] rejects longer tokens with [ErrMalformed] and
	// [Codec.Encode] refuses to issue them. Zero means
	// [DefaultMaxTokenBytes] (4096). Negative, or too small to hold any
	// cursor, is an error.
	MaxTokenBytes int
	// Now is the clock. Nil means [time.Now]. It is called from Encode and
	// Decode, so it must be safe for concurrent use. Tests inject a fixed
	// clock here instead of sleeping.
	Now func() time.Time
}

// key is the material derived from one secret.
type key struct {
	id    [keyIDLen]byte
	block cipher.Block // AES-256 with the encryption key; safe for concurrent use
	iv    macPool      // HMAC-SHA256 keyed with the IV key
	mac   macPool      // HMAC-SHA256 keyed with the MAC key
}

// macPool recycles HMAC-SHA256 states keyed with one key: keying a fresh
// HMAC costs more than the message it then authenticates.
type macPool struct {
	key  []byte
	pool sync.Pool
}

// appendSum appends HMAC-SHA256(key, msg) to dst.
func (m *macPool) appendSum(dst, msg []byte) []byte {
	h, _ := m.pool.Get().(hash.Hash)
	if h == nil {
		h = hmac.New(sha256.New, m.key)
	}
	h.Write(msg)
	dst = h.Sum(dst)
	h.Reset()
	m.pool.Put(h)
	return dst
}

// Codec encodes and decodes cursors with an ordered set of keys: the first
// signs, every one verifies.
//
// A Codec is immutable after [NewCodec] and safe for concurrent use by
// multiple goroutines. The zero value is not usable (its methods return
// errors); create one with NewCodec.
type Codec struct {
	keys        []*key // keys[0] signs
	ttl         time.Duration
	ttlSeconds  uint64
	skew        time.Duration
	maxToken    int
	now         func() time.Time
	errTooLarge error // preallocated so that oversize input costs no allocation
}

// NewCodec returns a Codec keyed by secrets. secrets[0] signs new cursors;
// every listed secret verifies them, so rotating a secret is a matter of
// putting the new one first, keeping the old one until the cursors it signed
// have expired ([Options.TTL]), and then removing it, after which cursors it
// signed are rejected with [ErrInvalid].
//
// Each secret must be at least [MinSecretBytes] (32) bytes of high-entropy
// data, such as the output of crypto/rand, and must not be listed twice.
// Keys are derived from the secrets with HKDF-SHA256; the secrets themselves
// are not kept. opts is copied; nil means the defaults.
func NewCodec(secrets [][]byte, opts *Options) (*Codec, error) {
	if len(secrets) == 0 {
		return nil, errors.New("cursor: no secret given; pass at least one secret of 32 bytes or more")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	c := &Codec{ttl: o.TTL, skew: o.Skew, maxToken: o.MaxTokenBytes, now: o.Now}
	switch {
	case c.ttl < 0:
		return nil, fmt.Errorf("cursor: Options.TTL is negative (%v); use zero for the default of %v", c.ttl, DefaultTTL)
	case c.ttl == 0:
		c.ttl = DefaultTTL
	case c.ttl > maxTTL:
		return nil, fmt.Errorf("cursor: Options.TTL is %v, longer than the %v a cursor can live", c.ttl, maxTTL)
	}
	if r := c.ttl % time.Second; r != 0 {
		c.ttl += time.Second - r
	}
	c.ttlSeconds = uint64(c.ttl / time.Second)
	switch {
	case c.skew == 0:
		c.skew = DefaultSkew
	case c.skew < 0:
		c.skew = 0
	}
	switch {
	case c.maxToken == 0:
		c.maxToken = DefaultMaxTokenBytes
	case c.maxToken < minTokenLen:
		return nil, fmt.Errorf("cursor: Options.MaxTokenBytes is %d; no cursor fits in fewer than %d bytes (use zero for the default of %d)",
			c.maxToken, minTokenLen, DefaultMaxTokenBytes)
	}
	if c.now == nil {
		c.now = time.Now
	}
	c.errTooLarge = fmt.Errorf("%w (the token is longer than %d bytes)", ErrMalformed, c.maxToken)

	c.keys = make([]*key, 0, len(secrets))
	for i, s := range secrets {
		if len(s) < MinSecretBytes {
			return nil, fmt.Errorf("cursor: secrets[%d] is %d bytes; each secret must be at least %d bytes of random data (for example from crypto/rand)",
				i, len(s), MinSecretBytes)
		}
		for j := range i {
			if hmac.Equal(s, secrets[j]) {
				return nil, fmt.Errorf("cursor: secrets[%d] repeats secrets[%d]; list each secret once", i, j)
			}
		}
		k, err := deriveKey(s)
		if err != nil {
			return nil, fmt.Errorf("cursor: deriving keys from secrets[%d]: %w", i, err)
		}
		for j := range c.keys {
			if c.keys[j].id == k.id {
				// Two distinct secrets with the same 32-bit ID: vanishingly
				// rare, but refuse rather than guess which key verifies.
				return nil, fmt.Errorf("cursor: secrets[%d] and secrets[%d] derive the same key ID; replace one of them", j, i)
			}
		}
		c.keys = append(c.keys, k)
	}
	return c, nil
}

func deriveKey(secret []byte) (*key, error) {
	derive := func(info string, n int) ([]byte, error) {
		return hkdf.Key(sha256.New, secret, []byte(hkdfSalt), info, n)
	}
	enc, err := derive(infoEncKey, encKeyBytes)
	if err != nil {
		return nil, err
	}
	ivKey, err := derive(infoIVKey, macKeyBytes)
	if err != nil {
		return nil, err
	}
	macKey, err := derive(infoMACKey, macKeyBytes)
	if err != nil {
		return nil, err
	}
	id, err := derive(infoKeyID, keyIDLen)
	if err != nil {
		return nil, err
	}
	k := &key{iv: macPool{key: ivKey}, mac: macPool{key: macKey}}
	copy(k.id[:], id)
	if k.block, err = aes.NewCipher(enc); err != nil {
		return nil, err
	}
	return k, nil
}

// TTL returns how long the cursors this codec issues stay valid: the
// configured [Options.TTL] rounded up to a whole second, or [DefaultTTL].
func (c *Codec) TTL() time.Duration {
	if c == nil {
		return 0
	}
	return c.ttl
}

// Encode seals p into a token. The token records its issue time, the
// codec's clock truncated to the second, and its expiry, issue time + TTL,
// which [Codec.Decode] returns as IssuedAt and Expires; the values of those
// fields in p are ignored.
//
// p.Kind must not be zero, p.Offset and p.Index must be >= 0, and
// p.Filters must be nil or valid JSON. Subject, Order and Filters are
// sealed as digests (Filters of their canonical form, see [Binding]; JSON
// null is the same as no filters), so the token's length depends only on
// Scope, Snapshot and Data. Encode fails if the token would be longer than
// [Options.MaxTokenBytes].
//
// Encoding is deterministic: the same payload, key and clock reading give
// the same token.
func (c *Codec) Encode(p Payload) (string, error) {
	if c == nil || len(c.keys) == 0 {
		return "", errors.New("cursor: Encode on a Codec not made by NewCodec; create it with NewCodec")
	}
	switch {
	case p.Kind == 0:
		return "", errors.New("cursor: Payload.Kind is zero; set it to KindPage, KindChunk or a kind of your own")
	case p.Offset < 0:
		return "", fmt.Errorf("cursor: Payload.Offset is %d; it must be >= 0", p.Offset)
	case p.Index < 0:
		return "", fmt.Errorf("cursor: Payload.Index is %d; it must be >= 0", p.Index)
	}
	filters, err := canonicalFilters(p.Filters)
	if err != nil {
		return "", fmt.Errorf("cursor: Payload.Filters: %w; pass nil or one JSON value", err)
	}
	sp := sealed{Payload: p, subject: subjectDigest(p.Subject), query: queryDigest(p.Order, filters)}
	now := c.now().Unix()
	if now < 0 || now > maxUnix {
		return "", errors.New("cursor: the clock reads a time before 1970 or after 9999; check Options.Now")
	}
	issued := uint64(now)

	ptLen := plaintextLen(&sp, issued, c.ttlSeconds)
	rawLen := overhead + ptLen
	if n := b64.EncodedLen(rawLen); n > c.maxToken {
		return "", fmt.Errorf("cursor: the cursor would be %d bytes, more than Options.MaxTokenBytes (%d); shorten the scope, snapshot or data, or raise the limit",
			n, c.maxToken)
	}

	k := c.keys[0]
	// One buffer: plaintext, then the raw token, then its base64 form.
	buf := make([]byte, 0, ptLen+rawLen+b64.EncodedLen(rawLen))
	pt := appendPlaintext(buf, &sp, issued, c.ttlSeconds)
	raw := pt[len(pt):]
	raw = append(raw, version2)
	raw = append(raw, k.id[:]...)
	raw = appendSIV(raw, &k.iv, pt)
	iv := raw[headerLen : headerLen+ivLen]
	raw = raw[:headerLen+ivLen+len(pt)]
	cipher.NewCTR(k.block, iv).XORKeyStream(raw[headerLen+ivLen:], pt)
	raw = k.mac.appendSum(raw, raw)
	return string(b64.AppendEncode(raw[len(raw):], raw)), nil
}

// Decode verifies token and returns its payload, with IssuedAt and Expires
// filled in (UTC, whole seconds), provided it was issued by a key of this
// codec, has not expired, and is bound to what want describes. Subject,
// Order and Filters are then those of want (Filters canonical).
//
// Every error wraps exactly one of the sentinels, checked in this order:
// [ErrMalformed] (too long, not canonical unpadded base64url, too short),
// [ErrInvalid] (unknown version or key, bad MAC, unreadable payload),
// [ErrExpired] (past Expires+Skew, or issued more than Skew in the future)
// and [ErrMismatch] (another kind, scope, subject, order or filters). No
// message contains the token.
func (c *Codec) Decode(token string, want Binding) (Payload, error) {
	p, err := c.open(token)
	if err != nil {
		return Payload{}, err
	}
	if err := bind(&p, &want); err != nil {
		return Payload{}, err
	}
	return p.Payload, nil
}

// OpenFor is [Codec.Decode] bound to the subject only: it checks the
// token's size, encoding, key, MAC and expiry and that it was issued for
// subject, and returns the payload whatever scope and query it is bound to,
// with Subject set and Order and Filters empty (they are sealed as
// digests). It is for callers that learn the rest from the cursor itself,
// such as an MCP continuation tool that finds the tool name in the
// cursor's Scope.
func (c *Codec) OpenFor(token, subject string) (Payload, error) {
	p, err := c.open(token)
	if err != nil {
		return Payload{}, err
	}
	if d := subjectDigest(subject); !hmac.Equal(d[:], p.subject[:]) {
		return Payload{}, errOtherSubject
	}
	p.Subject = subject
	return p.Payload, nil
}

// Open is [Codec.Decode] without any binding: it checks the token's size,
// encoding, key, MAC and expiry, and returns the payload whatever it is
// bound to, with Subject, Order and Filters empty (they are sealed as
// digests). A caller that serves what the cursor leads to must check the
// subject first: use [Codec.OpenFor].
func (c *Codec) Open(token string) (Payload, error) {
	p, err := c.open(token)
	return p.Payload, err
}

func (c *Codec) open(token string) (sealed, error) {
	if c == nil || len(c.keys) == 0 {
		return sealed{}, errNoKeys
	}
	// Size first, so that oversize input costs neither time nor memory.
	if len(token) > c.maxToken {
		return sealed{}, c.errTooLarge
	}
	if len(token) < minTokenLen {
		return sealed{}, errTooShort
	}

	// Canonical base64: decode, re-encode and compare, which rules out
	// padding, the standard alphabet, non-zero trailing bits and the CR/LF
	// that the decoder would otherwise skip. One buffer holds the raw bytes
	// and a copy of the token, whose room later takes the plaintext.
	rawLen := b64.DecodedLen(len(token))
	buf := make([]byte, rawLen+len(token))
	raw, text := buf[:rawLen], buf[rawLen:]
	copy(text, token)
	n, err := b64.Decode(raw, text)
	if err != nil || n != rawLen || string(b64.AppendEncode(text[:0], raw)) != token {
		return sealed{}, errNotBase64
	}
	if len(raw) < overhead+minPlaintextLen {
		return sealed{}, errTooShort
	}

	if raw[0] != version2 {
		return sealed{}, errVersion
	}
	k := c.key(raw[versionLen:headerLen])
	if k == nil {
		return sealed{}, errUnknownKey
	}
	body, tag := raw[:len(raw)-tagLen], raw[len(raw)-tagLen:]
	var sum [tagLen]byte
	if !hmac.Equal(k.mac.appendSum(sum[:0], body), tag) {
		return sealed{}, errBadMAC
	}

	iv, ct := body[headerLen:headerLen+ivLen], body[headerLen+ivLen:]
	pt := text[:len(ct)]
	cipher.NewCTR(k.block, iv).XORKeyStream(pt, ct)
	// With the MAC verified, what follows can only fail for a cursor from
	// a version that wrote another plaintext, or a bug: ErrInvalid.
	if !hmac.Equal(appendSIV(sum[:0], &k.iv, pt), iv) {
		return sealed{}, errBadIV
	}
	p, issued, ttl, ok := parsePlaintext(pt)
	if !ok {
		return sealed{}, errUnreadable
	}
	// Canonical form: the payload must re-encode to exactly these bytes
	// (ct is free now).
	if !bytes.Equal(appendPlaintext(ct[:0:len(ct)], &p, issued, ttl), pt) {
		return sealed{}, errNonCanonical
	}
	// parsePlaintext bounds issued and ttl: no overflow here.
	p.IssuedAt = time.Unix(int64(issued), 0).UTC()
	p.Expires = time.Unix(int64(issued+ttl), 0).UTC()

	now := c.now()
	if p.IssuedAt.After(now.Add(c.skew)) {
		return sealed{}, fmt.Errorf("%w (it was issued %v in the future: the server clocks disagree)",
			ErrExpired, p.IssuedAt.Sub(now).Truncate(time.Second))
	}
	if now.After(p.Expires.Add(c.skew)) {
		return sealed{}, fmt.Errorf("%w (it expired %v ago)", ErrExpired, now.Sub(p.Expires).Truncate(time.Second))
	}
	return p, nil
}

// Decode errors with fixed details, allocated once. They name what failed
// but nothing of the token's content.
var (
	errNoKeys       = fmt.Errorf("%w (the Codec was not made by NewCodec)", ErrInvalid)
	errTooShort     = fmt.Errorf("%w (the token is too short)", ErrMalformed)
	errNotBase64    = fmt.Errorf("%w (the token is not canonical unpadded base64url)", ErrMalformed)
	errVersion      = fmt.Errorf("%w (unknown cursor version)", ErrInvalid)
	errUnknownKey   = fmt.Errorf("%w (signed with an unknown key)", ErrInvalid)
	errBadMAC       = fmt.Errorf("%w (the signature does not match)", ErrInvalid)
	errBadIV        = fmt.Errorf("%w (the payload does not match its IV)", ErrInvalid)
	errUnreadable   = fmt.Errorf("%w (unreadable payload)", ErrInvalid)
	errNonCanonical = fmt.Errorf("%w (payload not in canonical form)", ErrInvalid)

	errOtherKind    = fmt.Errorf("%w (it was issued for another kind of continuation)", ErrMismatch)
	errOtherScope   = fmt.Errorf("%w (it was issued for another endpoint or tool)", ErrMismatch)
	errOtherSubject = fmt.Errorf("%w (it was issued for another subject)", ErrMismatch)
	errOtherFilters = fmt.Errorf("%w (it was issued for other filters)", ErrMismatch)
	errOtherQuery   = fmt.Errorf("%w (it was issued for another path, method, sort order or other filters)", ErrMismatch)
)

// key returns the key with the given ID, or nil.
func (c *Codec) key(id []byte) *key {
	for _, k := range c.keys {
		if string(k.id[:]) == string(id) {
			return k
		}
	}
	return nil
}

// bind reports ErrMismatch when p is not bound to want, and otherwise
// fills p's bound fields from want. The error says which field differs but
// not how, so it reveals no sealed value.
func bind(p *sealed, want *Binding) error {
	switch {
	case want.Kind != 0 && want.Kind != p.Kind:
		return errOtherKind
	case want.Scope != p.Scope:
		return errOtherScope
	}
	if d := subjectDigest(want.Subject); !hmac.Equal(d[:], p.subject[:]) {
		return errOtherSubject
	}
	filters, err := canonicalFilters(want.Filters)
	if err != nil {
		return errOtherFilters // filters that are not JSON match nothing
	}
	q := queryDigest(want.Order, filters)
	if !hmac.Equal(q[:], p.query[:]) {
		return errOtherQuery // both are digested: the message cannot say which
	}
	p.Subject, p.Order, p.Filters = want.Subject, want.Order, filters
	return nil
}

// appendSIV appends the synthetic IV of plaintext pt: the first 16 bytes of
// HMAC-SHA256(ivKey, pt).
func appendSIV(dst []byte, iv *macPool, pt []byte) []byte {
	var sum [sha256.Size]byte
	return append(dst, iv.appendSum(sum[:0], pt)[:ivLen]...)
}
