package history

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
)

// packPoints is migration 2's step: it moves version 1's points, a run
// at a time, into run_values, and drops their table.
func packPoints(ctx context.Context, tx *sql.Tx, s *sqlStore) error {
	var runs []int64
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT run_id FROM points ORDER BY run_id`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		runs = append(runs, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range runs {
		byMetric, err := runPoints(ctx, tx, s.d, id)
		if err != nil {
			return fmt.Errorf("run %d: %w", id, err)
		}
		if err := s.insertValues(ctx, tx, id, byMetric); err != nil {
			return fmt.Errorf("run %d: %w", id, err)
		}
	}
	_, err = tx.ExecContext(ctx, `DROP TABLE points`)
	return err
}

// runPoints reads version 1's points of run id, by metric.
func runPoints(ctx context.Context, tx *sql.Tx, d dialect, id int64) (map[string][]packedPoint, error) {
	rows, err := tx.QueryContext(ctx, `SELECT p.series_id, s.metric, p.value, p.whole, p.n
		FROM points p JOIN series s ON s.id = p.series_id WHERE p.run_id = `+d.arg(1), id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byMetric := map[string][]packedPoint{}
	for rows.Next() {
		var p packedPoint
		var metric string
		var whole sql.NullString
		if err := rows.Scan(&p.series, &metric, &p.value, &whole, &p.n); err != nil {
			return nil, err
		}
		if whole.Valid {
			if p.whole, err = strconv.ParseUint(whole.String, 10, 64); err != nil {
				return nil, fmt.Errorf("a whole count %q: %w", whole.String, err)
			}
			p.isWhole = true
		}
		byMetric[metric] = append(byMetric[metric], p)
	}
	return byMetric, rows.Err()
}

// insertValues records a run's points, a packed row for each metric, in
// the metrics' order.
func (s *sqlStore) insertValues(ctx context.Context, tx *sql.Tx, run int64, byMetric map[string][]packedPoint) error {
	metrics := make([]string, 0, len(byMetric))
	for m := range byMetric {
		metrics = append(metrics, m)
	}
	slices.Sort(metrics)
	for _, m := range metrics {
		data, err := pack(byMetric[m])
		if err != nil {
			return fmt.Errorf("metric %s: %w", m, err)
		}
		a := s.d.arg
		if _, err := tx.ExecContext(ctx, `INSERT INTO run_values (run_id, metric, data) VALUES (`+a(1)+`, `+a(2)+`, `+a(3)+`)`, run, m, data); err != nil {
			return err
		}
	}
	return nil
}
