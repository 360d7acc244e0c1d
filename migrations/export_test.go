package migrations

// CheckServer is Up's check of the server's version, with the least
// version a test asks for.
var CheckServer = checkServer
