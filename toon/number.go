package toon

import (
	"strconv"
)

// maxExponent bounds the exponents canonical numbers handle exactly: a JSON
// number whose exponent is 10^15 or more in magnitude has no canonical form
// here (no float64 reader reads it as anything but infinity or zero).
const maxExponent = 1e15

// appendNumber appends the canonical form (spec §2) of num, a valid JSON
// number, to dst: the same mathematical value, with no exponent when the
// magnitude is 0 or between 1e-6 (included) and 1e21 (excluded), no
// leading zeros, no trailing zeros after the point, no point when the
// value is an integer, -0 as 0; outside that range a mantissa with one
// digit before the point and the exponent as JavaScript writes it
// (lowercase e, explicit sign: 1e+21, 1.5e-7). Every digit of num is kept:
// the form is exact, never rounded to a float64.
//
// ok is false when the exponent is too large in magnitude (maxExponent);
// dst is then returned unchanged.
func appendNumber(dst, num []byte) (_ []byte, ok bool) {
	neg := num[0] == '-'
	i := 0
	if neg {
		i++
	}
	intStart := i
	for i < len(num) && isDigit(num[i]) {
		i++
	}
	intEnd := i
	fracStart, fracEnd := i, i
	if i < len(num) && num[i] == '.' {
		i++
		fracStart = i
		for i < len(num) && isDigit(num[i]) {
			i++
		}
		fracEnd = i
	}
	var exp int64
	if i < len(num) && (num[i] == 'e' || num[i] == 'E') {
		i++
		expNeg := false
		if num[i] == '+' || num[i] == '-' {
			expNeg = num[i] == '-'
			i++
		}
		for ; i < len(num); i++ {
			exp = exp*10 + int64(num[i]-'0')
			if exp >= maxExponent {
				return dst, false
			}
		}
		if expNeg {
			exp = -exp
		}
	}

	// The digits are num[intStart:intEnd] followed by num[fracStart:fracEnd];
	// point is how many of them stand before the decimal point.
	digit := func(k int) byte {
		if n := intEnd - intStart; k < n {
			return num[intStart+k]
		} else {
			return num[fracStart+k-n]
		}
	}
	total := (intEnd - intStart) + (fracEnd - fracStart)
	point := int64(intEnd-intStart) + exp
	first, last := 0, total // significant digits: digit(first) to digit(last-1)
	for first < total && digit(first) == '0' {
		first++
		point--
	}
	for last > first && digit(last-1) == '0' {
		last--
	}
	if first == last {
		return append(dst, '0'), true
	}
	if neg {
		dst = append(dst, '-')
	}
	appendDigits := func(dst []byte, from, to int) []byte {
		for k := from; k < to; k++ {
			dst = append(dst, digit(k))
		}
		return dst
	}
	k := int64(last - first) // significant digits; the value is 0.DIGITS × 10^point
	switch {
	case point >= -5 && point <= 0: // 1e-6 <= |n| < 1: 0.000ddd
		dst = append(dst, '0', '.')
		for z := point; z < 0; z++ {
			dst = append(dst, '0')
		}
		return appendDigits(dst, first, last), true
	case point > 0 && point <= 21: // 1 <= |n| < 1e21
		if point >= k {
			dst = appendDigits(dst, first, last)
			for z := k; z < point; z++ {
				dst = append(dst, '0')
			}
			return dst, true
		}
		dst = appendDigits(dst, first, first+int(point))
		dst = append(dst, '.')
		return appendDigits(dst, first+int(point), last), true
	}
	dst = append(dst, digit(first))
	if k > 1 {
		dst = append(dst, '.')
		dst = appendDigits(dst, first+1, last)
	}
	dst = append(dst, 'e')
	if point-1 >= 0 {
		dst = append(dst, '+')
	}
	return strconv.AppendInt(dst, point-1, 10), true
}

// overflows reports whether a float64 reader reads the canonical number c
// (as appendNumber writes it) as an infinity: its magnitude rounds above
// the largest float64.
func overflows(c []byte) bool {
	// Below 1e308 nothing overflows; only the exponent form reaches it.
	e := len(c) - 1
	for e >= 0 && c[e] != 'e' {
		e--
	}
	if e < 0 || c[e+1] != '+' || len(c)-(e+2) < 3 {
		return false // no exponent, a negative one, or one of at most 2 digits
	}
	_, err := strconv.ParseFloat(string(c), 64)
	return err != nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isNumber reports whether tok is a JSON number (RFC 8259 §6): an optional
// minus, an integer part without leading zeros, an optional fraction and
// an optional exponent. Decode reads exactly these tokens as numbers.
func isNumber(tok []byte) bool {
	i := 0
	if i < len(tok) && tok[i] == '-' {
		i++
	}
	switch {
	case i == len(tok):
		return false
	case tok[i] == '0':
		i++
	case tok[i] >= '1' && tok[i] <= '9':
		for i < len(tok) && isDigit(tok[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(tok) && tok[i] == '.' {
		i++
		if i == len(tok) || !isDigit(tok[i]) {
			return false
		}
		for i < len(tok) && isDigit(tok[i]) {
			i++
		}
	}
	if i < len(tok) && (tok[i] == 'e' || tok[i] == 'E') {
		i++
		if i < len(tok) && (tok[i] == '+' || tok[i] == '-') {
			i++
		}
		if i == len(tok) || !isDigit(tok[i]) {
			return false
		}
		for i < len(tok) && isDigit(tok[i]) {
			i++
		}
	}
	return i == len(tok)
}
