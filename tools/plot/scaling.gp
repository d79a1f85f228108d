# Called by scaling.sh with csv (the input) and svg (the output) set.
set datafile separator comma
set datafile columnheaders

N = 'column("entities")'
# Only the (f) family (its rows are named scaling_N); the world family's rows share the CSV.
F = '(strcol("scenario")[1:8] eq "scaling_")'
LIB = '(@F ? column("sightline_ms_per_tick") : NaN)'
BRUTE = '(@F ? column("brute_force_ms_per_tick") : NaN)'

# Least-squares line through the logs of each series (its slope is the exponent), and the first
# row (both series' first point, which the reference lines go through).
stats csv using (log(@N)):(log(@LIB)) name "S" nooutput
stats csv using (log(@N)):(log(@BRUTE)) name "B" nooutput
stats csv every ::0::0 using (@N) name "N0" nooutput
stats csv every ::0::0 using (@LIB) name "S0" nooutput
stats csv every ::0::0 using (@BRUTE) name "B0" nooutput
print sprintf("fitted slope (least squares, log ms/tick against log N): sightline %.2f over %d points, brute force %.2f over %d points", S_slope, S_records, B_slope, B_records)

# Each reference line spans only its own series' entity counts.
slope1(x) = x >= N0_min && x <= exp(S_max_x) ? S0_min * (x / N0_min) : NaN
slope2(x) = x >= N0_min && x <= exp(B_max_x) ? B0_min * (x / N0_min)**2 : NaN

set terminal svg size 800,560 dynamic enhanced font "Helvetica,13" background rgb "white"
set output svg
set logscale xy
set xrange [exp(S_min_x) / 1.3 : exp(S_max_x) * 1.3]
set format x "%.0f"
set format y "%g"
set xlabel "entities N (every one a client, constant density)"
set ylabel "tick time, ms (median wall clock, one thread)"
set title "Tick time against entity count: scenario (f), R = 30, L = 33"
set key bottom right box opaque
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
set samples 400
plot csv using (@N):(@LIB) with linespoints lw 2 pt 7 ps 1.2 lc rgb "#1f60c4" \
       title sprintf("Sightline (fitted slope %.2f)", S_slope), \
     csv using (@N):(@BRUTE) with linespoints lw 2 pt 5 ps 1.2 lc rgb "#c43c1f" \
       title sprintf("brute force (fitted slope %.2f)", B_slope), \
     slope1(x) with lines dt 2 lw 1.5 lc rgb "#1f60c4" title "slope 1 (O(N)) through Sightline's first point", \
     slope2(x) with lines dt 2 lw 1.5 lc rgb "#c43c1f" title "slope 2 (O(N^2)) through brute force's first point"
