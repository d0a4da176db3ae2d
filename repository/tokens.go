package repository

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"time"
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

// TokenIDLength is the length of a token's public ID: that many leading hex
// digits of its hash (64 bits), enough to tell tokens apart and useless for
// authenticating.
const TokenIDLength = 16

// ID returns the token's public ID, which lists show and revocation takes.
func (t *Token) ID() string {
	if len(t.Hash) < TokenIDLength {
		return t.Hash
	}
	return t.Hash[:TokenIDLength]
}

// ValidTokenID reports whether id has the form of a token's public ID.
func ValidTokenID(id string) bool {
	if len(id) != TokenIDLength {
		return false
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// TokenTouchInterval is how stale a token's LastUsed may get: an
// authentication records its use only when the stored time is older, so a
// busy client costs one write a minute, not one per request.
const TokenTouchInterval = time.Minute

// Usable reports whether the token may authenticate at now (not expired).
func (t *Token) Usable(now time.Time) bool {
	return t.Expires.IsZero() || now.Before(t.Expires)
}
