package serdejson

import "unicode/utf8"

// QuoteString returns s as a JSON string literal with serde_json's escapes:
// \" and \\, the short forms \b \t \n \f \r, \u00xx (lowercase hex) for the
// other bytes below 0x20, and every other character raw (including '/',
// 0x7F, '<', '>', '&', U+2028 and U+2029). Each byte of s that is not part
// of valid UTF-8 is written as U+FFFD.
func QuoteString(s string) string {
	return string(AppendString(nil, s))
}

const hexDigits = "0123456789abcdef"

// shortEscapes[c] is the letter of the two-character escape of byte c
// (\" \\ \b \t \n \f \r), 0 when c has none.
var shortEscapes = [256]byte{'"': '"', '\\': '\\', '\b': 'b', '\t': 't', '\n': 'n', '\f': 'f', '\r': 'r'}

// AppendString appends QuoteString(s) to dst.
func AppendString(dst []byte, s string) []byte {
	return appendString(dst, s, true)
}

// AppendRawString appends s quoted with QuoteString's escapes but without
// its U+FFFD replacement: bytes that are not valid UTF-8 are copied as they
// are, so text read from a JSON file is written back unchanged.
func AppendRawString(dst []byte, s string) []byte {
	return appendString(dst, s, false)
}

func appendString(dst []byte, s string, replaceInvalid bool) []byte {
	dst = append(dst, '"')
	start := 0 // s[start:i] is pending raw output
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if !replaceInvalid || r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i++
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		if e := shortEscapes[c]; e != 0 {
			dst = append(dst, '\\', e)
		} else {
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
