// Package project is the project service: it applies the RUNTIME stream to the Postgres projections, exactly once per event.
//
// The service arrives with the pipeline; until then Run says so and fails,
// so that nothing is mistaken for a working stage.
package project
