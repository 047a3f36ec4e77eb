package httpapi

import "github.com/danielgtaylor/huma/v2"

// registerAdmin is the slot for the /admin/v1 routes of DESIGN §6 (traces,
// render, replay). They arrive through Options.Admin; the authenticate
// middleware already answers 401 without a token and 403 with a user token
// for every /admin path, registered or not, before any admin handler runs.
func (s *Server) registerAdmin(api huma.API) {
	if s.admin != nil {
		s.admin(api)
	}
}
