package handlers

import (
	"github.com/calendar/eventcal/app/input"
)

// noControlsMsg is the message for a contact field that holds one.
const noControlsMsg = " must not contain line breaks, tabs or other control characters."

// contactCheck returns the validator of the contact field named field:
// an empty value passes, a value with a control character or line
// separator is refused, and any other must satisfy valid (nil: any text),
// else the answer is the field's name followed by expected.
func contactCheck(field string, valid func(string) bool, expected string) func(*Request, any) string {
	return func(_ *Request, v any) string {
		s, ok := input.AsString(v)
		switch {
		case !ok:
			return contactNotText
		case s == "":
			return ""
		case input.LineBreaking(s):
			return field + noControlsMsg
		case valid != nil && !valid(s):
			return field + expected
		}
		return ""
	}
}

var (
	// checkPhone accepts any text without control characters or line
	// separators.
	checkPhone = contactCheck("phone", nil, "")
	// checkEmail accepts one plain e-mail address.
	checkEmail = contactCheck("email", input.PlainEmail,
		" must be empty or one e-mail address such as name@example.org (no display name, spaces or quotes).")
	// checkWebsite accepts an absolute http or https URL.
	checkWebsite = contactCheck("website", validURL,
		" must be empty or an absolute http or https URL such as https://example.org/page.")
)

// contactNotText is the message of a contact field sent as a list or an object.
const contactNotText = "Must be a string (empty to clear), not a list or an object."
