package workflow

// UserRegistry returns reg as userID sees it: a registry that implements
// UserScoped shows only the actions that user may run.
func UserRegistry(reg Registry, userID string) Registry {
	if s, ok := reg.(UserScoped); ok {
		return s.ForUser(userID)
	}
	return reg
}

// UserConnections returns the connections userID owns in reg (public
// descriptions only), never nil: what Run.Connections gives a mode.
func UserConnections(reg Registry, userID string) []Connection {
	if c := reg.Connections(userID); c != nil {
		return c
	}
	return []Connection{}
}
