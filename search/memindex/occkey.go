package memindex

import "strings"

// occKey is an occurrence key (search.EventDocument.Occurrence) as a row
// holds it, without a pointer, so that the rows (one per document, several
// million at the service's target size) are an array the garbage collector
// does not scan, and no key is an object of its own for it to mark (each
// occurrence's key string was one: 2.6 million of them at 100,000 events
// and 25,000 weekly series).
//
//   - 0 is the empty key (a single event).
//   - A key of the service's form, "20060102T150405" (fifteen bytes:
//     eight digits, 'T', six digits), is its fourteen digits as a number,
//     with occCanonical set: two such keys compare as their strings do.
//   - Any other key is interned in the index's occNames: occKey is its
//     index there plus one (below occCanonical).
type occKey uint64

// occCanonical marks an occKey that holds a key of the service's form.
const occCanonical occKey = 1 << 63

// occLen is the length of a key of the service's form.
const occLen = 15

// canonicalOcc returns k's number when k has the service's form
// ("20060102T150405").
func canonicalOcc(k string) (occKey, bool) {
	if len(k) != occLen || k[8] != 'T' {
		return 0, false
	}
	var n uint64
	for i := 0; i < occLen; i++ {
		if i == 8 {
			continue
		}
		c := k[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return occCanonical | occKey(n), true
}

// occNames interns the occurrence keys that do not have the service's
// form (tests and other callers write such keys), counted by the rows
// that hold them so that a key's number is reused once no row holds it.
type occNames struct {
	names []string
	refs  []int32
	num   map[string]uint32
	free  []uint32
}

// keyOcc returns the occKey of occurrence key k, interning it when it is
// neither empty nor of the service's form (a row's reference: see
// dropOcc).
func (o *occNames) keyOcc(k string) occKey {
	if k == "" {
		return 0
	}
	if c, ok := canonicalOcc(k); ok {
		return c
	}
	if o.num == nil {
		o.num = map[string]uint32{}
	}
	i, ok := o.num[k]
	if !ok {
		if n := len(o.free); n > 0 {
			i, o.free = o.free[n-1], o.free[:n-1]
			o.names[i], o.refs[i] = k, 0
		} else {
			i = uint32(len(o.names))
			o.names, o.refs = append(o.names, k), append(o.refs, 0)
		}
		o.num[k] = i
	}
	o.refs[i]++
	return occKey(i) + 1
}

// dropOcc gives back a row's reference to k (see keyOcc).
func (o *occNames) dropOcc(k occKey) {
	if k == 0 || k&occCanonical != 0 {
		return
	}
	i := uint32(k - 1)
	if o.refs[i]--; o.refs[i] == 0 {
		delete(o.num, o.names[i])
		o.names[i] = ""
		o.free = append(o.free, i)
	}
}

// occString returns the occurrence key of k (a new string for a key of
// the service's form).
func (o *occNames) occString(k occKey) string {
	switch {
	case k == 0:
		return ""
	case k&occCanonical != 0:
		buf := canonicalBytes(k)
		return string(buf[:])
	}
	return o.names[k-1]
}

// compareOcc compares the occurrence keys of a and b as strings.
func (o *occNames) compareOcc(a, b occKey) int {
	switch {
	case a == b:
		return 0
	case a&occCanonical != 0 && b&occCanonical != 0:
		if a < b {
			return -1
		}
		return 1
	case b&occCanonical == 0:
		return o.compareOccString(a, o.interned(b))
	}
	return -o.compareOccString(b, o.interned(a))
}

// interned returns the key of k, empty or interned (not of the service's
// form).
func (o *occNames) interned(k occKey) string {
	if k == 0 {
		return ""
	}
	return o.names[k-1]
}

// compareOccString compares the occurrence key of a with k as strings,
// without allocating.
func (o *occNames) compareOccString(a occKey, k string) int {
	if a&occCanonical == 0 {
		return strings.Compare(o.interned(a), k)
	}
	if c, ok := canonicalOcc(k); ok {
		switch {
		case a < c:
			return -1
		case a > c:
			return 1
		}
		return 0
	}
	buf := canonicalBytes(a)
	for i := 0; i < len(buf) && i < len(k); i++ {
		if buf[i] != k[i] {
			if buf[i] < k[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(buf) < len(k):
		return -1
	case len(buf) > len(k):
		return 1
	}
	return 0
}

// canonicalBytes returns the key of canonical k (see canonicalOcc).
func canonicalBytes(k occKey) [occLen]byte {
	var buf [occLen]byte
	n := uint64(k &^ occCanonical)
	for i := occLen - 1; i >= 0; i-- {
		if i == 8 {
			buf[i] = 'T'
			continue
		}
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	return buf
}
