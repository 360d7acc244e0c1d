// Package normalize is the normalize service: it consumes the RAW stream in order per session, maps frames to canonical events with the adapters, and publishes them to the RUNTIME stream.
//
// The service arrives with the pipeline; until then Run says so and fails,
// so that nothing is mistaken for a working stage.
package normalize
