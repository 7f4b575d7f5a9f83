package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
)

func sha256hex(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
func nan() float64              { return math.NaN() }
