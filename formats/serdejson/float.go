package serdejson

import (
	"bytes"
	"math"
	"strconv"
)

// FormatFloat returns the JSON serde_json writes for the f64 value f:
// "null" for NaN and ±Inf, "0.0" / "-0.0" for zeros, otherwise the shortest
// digits that round-trip, in fixed notation when the decimal exponent is in
// [-5, 15] and in scientific notation ("1e+16", "1.5e-7") otherwise.
func FormatFloat(f float64) string {
	return string(AppendFloat(nil, f))
}

// FormatFloat32 is FormatFloat for an f32 field: 32-bit shortest digits,
// fixed notation when the decimal exponent is in [-6, 12].
func FormatFloat32(f float32) string {
	return string(AppendFloat32(nil, f))
}

// AppendFloat appends FormatFloat(f) to dst.
func AppendFloat(dst []byte, f float64) []byte {
	return appendFloat(dst, f, 64, Zmij)
}

// AppendFloat32 appends FormatFloat32(f) to dst.
func AppendFloat32(dst []byte, f float32) []byte {
	return appendFloat(dst, float64(f), 32, Zmij)
}

// Era is the float formatter of a serde_json release. The eras write the
// same digits in the same notation and differ only in the sign of a positive
// exponent in scientific notation: Zmij writes "1e+16", Ryu "1e16". The zero
// Era is Zmij.
type Era uint8

// Float eras.
const (
	// Zmij is serde_json 1.0.147 and later (zmij): "1e+16". What lean-ctx
	// writes today and what git-ctx writes.
	Zmij Era = iota
	// Ryu is serde_json before 1.0.147 (ryu): "1e16".
	Ryu
)

// String returns "zmij" or "ryu".
func (e Era) String() string {
	if e == Ryu {
		return "ryu"
	}
	return "zmij"
}

// EraSensitive reports whether the eras write the f64 f differently: it is
// finite and written in scientific notation with a positive exponent
// (|f| ≥ 1e16).
func EraSensitive(f float64) bool {
	return sciPositive(f, 64)
}

// EraSensitive32 is EraSensitive for an f32 field (|f| ≥ 1e13).
func EraSensitive32(f float32) bool {
	return sciPositive(float64(f), 32)
}

func sciPositive(f float64, bits int) bool {
	var tmp [32]byte
	return bytes.Contains(appendFloat(tmp[:0], f, bits, Zmij), []byte("e+"))
}

// fixedRange is the decimal exponent range written in fixed notation.
func fixedRange(bits int) (minExp, maxExp int) {
	if bits == 32 {
		return -6, 12
	}
	return -5, 15
}

func appendFloat(dst []byte, f float64, bits int, era Era) []byte {
	minExp, maxExp := fixedRange(bits)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	// strconv gives the shortest round-trip digits as d.ddddde±XX.
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, bits)
	if e[0] == '-' {
		dst = append(dst, '-')
		e = e[1:]
	}
	var digits [24]byte
	n := 0
	i := 0
	for ; e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[n] = e[i]
			n++
		}
	}
	exp, _ := strconv.Atoi(string(e[i+1:])) // "+16", "-07": Atoi accepts the sign
	d := digits[:n]
	switch {
	case exp < minExp || exp > maxExp:
		dst = append(dst, d[0])
		if n > 1 {
			dst = append(dst, '.')
			dst = append(dst, d[1:]...)
		}
		dst = append(dst, 'e')
		if exp >= 0 && era == Zmij {
			dst = append(dst, '+')
		}
		return strconv.AppendInt(dst, int64(exp), 10)
	case exp < 0:
		dst = append(dst, '0', '.')
		for k := 0; k < -exp-1; k++ {
			dst = append(dst, '0')
		}
		return append(dst, d...)
	case n <= exp+1:
		dst = append(dst, d...)
		for k := n; k < exp+1; k++ {
			dst = append(dst, '0')
		}
		return append(dst, '.', '0')
	default:
		dst = append(dst, d[:exp+1]...)
		dst = append(dst, '.')
		return append(dst, d[exp+1:]...)
	}
}
