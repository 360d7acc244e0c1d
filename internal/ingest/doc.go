// Package ingest is the ingest service: it reads agent frames from files, standard input, spawned agent processes and live taps, and publishes them unchanged to the RAW stream.
//
// The service arrives with the pipeline; until then Run says so and fails,
// so that nothing is mistaken for a working stage.
package ingest
