package present

import (
	"bytes"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"
)

// SendJSON writes v with the status, without HTML escaping (text comes back
// as stored: docs/decisions.md, "Reads").
//
// WordPress's global parameters apply to every response:
// _fields keeps only the listed (comma-separated, dotted) fields of the
// object, and _envelope wraps the response as {body, status, headers} with
// HTTP 200. _jsonp is not supported (JSONP defeats CORS). An error (status
// 400 or above) is never filtered by _fields, as WordPress leaves errors
// whole: a client asking for "id,title" still learns what went wrong.
func SendJSON(c *fiber.Ctx, status int, v any) error {
	args := c.Request().URI().QueryArgs()
	if fields := string(args.Peek("_fields")); fields != "" && status < 400 {
		if tv, ok := v.(jsonValue); ok {
			// A typed value is picked from its encoding, read back in order.
			raw, err := marshal(tv)
			if err != nil {
				return err
			}
			if v, err = decodeOrdered(raw); err != nil {
				return err
			}
		}
		if o, ok := v.(*Obj); ok {
			v = PickFields(o, strings.Split(fields, ","))
		}
	}
	if args.Has("_envelope") {
		headers := NewObj()
		for _, h := range []string{"X-TEC-Total", "X-TEC-TotalPages", "X-WP-Total", "X-WP-TotalPages", "Location"} {
			if val := c.GetRespHeader(h); val != "" {
				headers.Set(h, val)
			}
		}
		v = NewObj().Set("body", v).Set("status", status).Set("headers", headers)
		status = fiber.StatusOK
	}
	buf := jsonBuffers.Get().(*bytes.Buffer)
	defer putJSONBuffer(buf)
	if err := WriteJSON(buf, v); err != nil {
		return err
	}
	c.Status(status)
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	// SetBody copies: the buffer goes back to the pool.
	c.Response().SetBody(buf.Bytes())
	return nil
}

// jsonBuffers holds the buffers SendJSON encodes into, so that a list
// page is not encoded into a buffer grown from nothing on every request.
var jsonBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledJSONBuffer is the largest buffer kept in jsonBuffers.
const maxPooledJSONBuffer = 1 << 20

// putJSONBuffer empties a buffer and returns it to the pool (unless it
// grew past maxPooledJSONBuffer).
func putJSONBuffer(buf *bytes.Buffer) {
	if buf.Cap() > maxPooledJSONBuffer {
		return
	}
	buf.Reset()
	jsonBuffers.Put(buf)
}
