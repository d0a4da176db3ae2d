package repository

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
)

// NewTokenSecret returns a fresh random API token (256 bits, hex-encoded).
// Only its HashToken value is ever stored.
func NewTokenSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "ecal_" + hex.EncodeToString(b), nil
}

// HashToken returns the hex SHA-256 of a token secret, the only form in
// which tokens are stored. Lookups go by this hash, so no comparison of the
// secret itself happens outside constant-time code.
func HashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}
