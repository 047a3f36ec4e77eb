package main

import "strings"

// redactURL returns msg with rawURL's password replaced by "xxxxx", in the
// URL as given and on its own. Parse errors quote a URL whole, so this works
// on the text even when rawURL does not parse.
func redactURL(msg, rawURL string) string {
	_, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return msg
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return msg
	}
	_, password, ok := strings.Cut(rest[:at], ":")
	if !ok || password == "" {
		return msg
	}
	return strings.ReplaceAll(msg, password, "xxxxx")
}
