package serdejson

// Pretty returns the serde_json::to_string_pretty layout of the JSON value
// in src: two-space indent, '\n' line breaks, ": " after keys, ',' at the end
// of element lines, empty arrays and objects inline as [] and {}, and no
// trailing newline. Whitespace outside strings in src is dropped; string and
// number bytes are copied unchanged. src must be valid JSON (for example the
// Writer's output); other input gives unspecified output but never panics.
func Pretty(src []byte) []byte {
	out := make([]byte, 0, len(src)+len(src)/2)
	depth := 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case ' ', '\t', '\n', '\r':
		case '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(src) {
				j = len(src) - 1
			}
			out = append(out, src[i:j+1]...)
			i = j
		case '{', '[':
			out = append(out, c)
			if k := skipSpace(src, i+1); k < len(src) && (src[k] == '}' || src[k] == ']') {
				out = append(out, src[k])
				i = k
				continue
			}
			depth++
			out = newline(out, depth)
		case '}', ']':
			if depth > 0 {
				depth--
			}
			out = newline(out, depth)
			out = append(out, c)
		case ',':
			out = append(out, ',')
			out = newline(out, depth)
		case ':':
			out = append(out, ':', ' ')
		default:
			out = append(out, c)
		}
	}
	return out
}

func skipSpace(src []byte, i int) int {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
		i++
	}
	return i
}

func newline(out []byte, depth int) []byte {
	out = append(out, '\n')
	for k := 0; k < depth; k++ {
		out = append(out, ' ', ' ')
	}
	return out
}
