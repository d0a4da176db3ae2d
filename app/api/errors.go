package api

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/repository"
)

// errorHandler writes every error body. Store failures become 503 so that
// clients retry, a duplicate key of the store 409 (rest_conflict), a record
// over the store's size bound 413 (rest_document_too_large); Fiber's own
// errors keep their status.
func (s *Server) errorHandler(c *fiber.Ctx, err error) error {
	if requestID(c) == "" && s.metrics != nil {
		// An HTTP-layer error (413, 431, 408, a malformed request) that
		// fasthttp reports before the middleware chain: observe it like
		// every request, which calls back here to write the envelope.
		s.observe(c, s.metrics, func() error { return err })
		return nil
	}
	var apiErr *apierr.Error
	var fe *fiber.Error
	switch {
	case errors.As(err, &apiErr):
	case errors.As(err, &fe):
		switch fe.Code {
		case 404, 405:
			apiErr = apierr.NoRoute()
		case 413:
			apiErr = errBodyTooLarge()
		case 408:
			apiErr = apierr.New(408, "rest_request_timeout", "The request was not received in time.")
		case 431:
			apiErr = apierr.New(431, "rest_request_headers_too_large", "The request headers are too large.")
		case 400:
			// fasthttp's parse errors quote the raw request: not echoed.
			apiErr = apierr.New(400, "rest_bad_request", "The request could not be read.")
		default:
			apiErr = apierr.New(fe.Code, "rest_error", fe.Message)
		}
	case errors.Is(err, repository.ErrNotFound):
		apiErr = apierr.New(404, "rest_not_found", "Not found.")
	case errors.Is(err, repository.ErrDuplicate):
		// A unique key the request needs was taken meanwhile (an ID, a
		// login): retrying the same request cannot succeed, so not 503.
		s.log.Info("request conflicts with stored data", "method", c.Method(), "path", c.Path(), "request_id", requestID(c), "err", err)
		apiErr = errConflict()
	case errors.Is(err, repository.ErrTooLarge):
		// A record over what a store keeps: retrying cannot help.
		s.log.Info("record too large", "method", c.Method(), "path", c.Path(), "request_id", requestID(c), "err", err)
		apiErr = errRecordTooLarge(err)
	default:
		s.log.Error("request failed", "method", c.Method(), "path", c.Path(), "request_id", requestID(c), "err", err)
		apiErr = apierr.Unavailable("store")
	}
	c.Locals(localErrorCode, apiErr.Code)
	data := map[string]any{"status": apiErr.Status}
	for k, v := range apiErr.Data {
		data[k] = v
	}
	if apiErr.Status >= 500 {
		s.log.Warn("error response", slog.Int("status", apiErr.Status), slog.String("code", apiErr.Code), slog.String("path", c.Path()), slog.String("request_id", requestID(c)))
	}
	return present.SendJSON(c, apiErr.Status, present.NewObj().Set("code", apiErr.Code).Set("message", apiErr.Message).Set("data", data))
}

// errConflict is the 409 of a write refused by a unique key of the store.
func errConflict() *apierr.Error {
	return apierr.New(409, "rest_conflict", "The request conflicts with data stored meanwhile (a key it needs is taken); read the current state and try again.")
}

// errRecordTooLarge is the 413 of a write whose record would be over
// repository.MaxRecordBytes (MongoDB's 16 MiB document limit, less room
// for the engine's own fields): the message names the record's largest
// field, the data its size and the bound.
func errRecordTooLarge(err error) *apierr.Error {
	var tl *repository.TooLargeError
	if !errors.As(err, &tl) {
		return apierr.New(413, "rest_document_too_large", fmt.Sprintf("The record would be larger than the %d bytes a record may hold.", repository.MaxRecordBytes))
	}
	field := apiFieldPath(tl.Field)
	return apierr.New(413, "rest_document_too_large", fmt.Sprintf(
		"The record would be %d bytes, more than the %d bytes a record may hold; its largest field is %s (%d bytes). Shorten it, or split the series.",
		tl.Bytes, repository.MaxRecordBytes, field, tl.FieldBytes)).
		With("field", field).With("size", tl.Bytes).With("limit", repository.MaxRecordBytes)
}

// apiFieldPath turns the stored path of a record's field (as
// repository.TooLargeError names it) into the API's names: event fields
// sit at the top level, and "content" is the description.
func apiFieldPath(stored string) string {
	parts := strings.Split(strings.TrimPrefix(stored, "event."), ".")
	for i, p := range parts {
		if p == "content" {
			parts[i] = "description"
		}
	}
	return strings.Join(parts, ".")
}
