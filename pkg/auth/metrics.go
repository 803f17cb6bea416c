package auth

// reason is f's label for Options.Rejected: no_token, invalid_request,
// invalid_token, insufficient_scope or unavailable (the issuer could not
// be reached).
func (f *Failure) reason() string {
	switch {
	case f.Status == 503:
		return "unavailable"
	case f.Code == "":
		return "no_token"
	default:
		return f.Code
	}
}
