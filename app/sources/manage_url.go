package sources

import (
	"errors"
	"net/url"
	"strings"

	syncwebhooks "github.com/calendar/eventcal/sync/webhooks"
)

// CheckURL checks a source's URL as the API takes it: absolute http or
// https with a host, no credentials (user:password@), at most 2,048
// bytes, and (unless allowPrivate, SOURCES_ALLOW_PRIVATE) not a loopback,
// private or otherwise blocked address nor "localhost": the address rules
// of webhook endpoints. The fetcher checks every resolved address again
// on each connection. The error says what is wrong, for a 400.
func CheckURL(raw string, allowPrivate bool) error {
	if err := syncwebhooks.CheckURL(raw, allowPrivate); err != nil {
		if errors.Is(err, syncwebhooks.ErrBlockedAddress) {
			return errors.New("the URL names a loopback, private or reserved address; such sources need SOURCES_ALLOW_PRIVATE=true")
		}
		return errors.New(strings.TrimPrefix(err.Error(), "webhook: "))
	}
	u, _ := url.Parse(raw)
	if u.User != nil {
		return errors.New("the URL must not hold credentials (user:password@)")
	}
	return nil
}
