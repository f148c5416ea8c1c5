package redlock

// makeRoom drops an arbitrary entry of m when key is not in it and m
// already holds limit entries. The per-key hints of a Client (token cache,
// released values, local holders) are bounded this way: losing one only
// costs the shortcut it served.
func makeRoom[V any](m map[string]V, key string, limit int) {
	if _, ok := m[key]; ok || len(m) < limit {
		return
	}
	for k := range m {
		delete(m, k)
		return
	}
}
