// Package input reads a request's parameters and body into values the
// handlers can trust: the parameter bag with WordPress's precedence and
// coercions (Bag, NewBag, AsString, AsInt, AsBool...), the declared
// parameters and their checks (Arg, Validate), the search-text rule and
// the contact-field rules; the rules for dates and URLs, which the service
// layer applies too, are its HTTP-free subpackage values. Its errors are apierr envelopes that name the
// parameter, what was received and what is accepted. It knows nothing of
// roles or the store.
package input
