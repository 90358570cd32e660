package papers

import "math"

// The published figures of Table 1: 3-NN test error (%) with the standard
// deviation over 10 seeded splits where the paper ran 10, and the
// computation time as printed. Two tables print them:
//
//   - "BoostMetric: Boosting positive semidefinite matrices for metric
//     learning" (JMLR 2012), Table 1: every row but FrobMetric; its text as
//     we have it lacks the MNIST column of the Euclidean, LMNN and ITML rows.
//   - "A scalable dual approach to semidefinite metric learning" (FrobMetric),
//     Table I: Euclidean, LMNN, ITML, BoostMetric (exponential loss,
//     stage-wise) and FrobMetric, MNIST included, on the same splits and
//     triplets.
//
// A figure is taken from the BoostMetric table where it prints one, else
// from the FrobMetric table. The times of LMNN, ITML and FrobMetric are the
// FrobMetric table's; those of the BoostMetric rows the BoostMetric
// table's where its columns can be told apart (MNIST and letters).
const (
	srcBoost = "BoostMetric, JMLR 2012, Table 1"
	srcFrob  = "FrobMetric, Table I"
)

func fig(mean, sd float64, runs int, time, src string) Figure {
	return Figure{Mean: mean, SD: sd, Runs: runs, Time: time, Source: src}
}

var nan = math.NaN()

// table1Figures maps a row key and a column key to the published figure.
var table1Figures = map[string]map[string]Figure{
	"euclidean": {
		"mnist":   fig(3.19, nan, 1, "", srcFrob),
		"letters": fig(5.42, nan, 1, "", srcBoost),
		"bal":     fig(18.60, 3.96, 10, "", srcBoost),
		"wine":    fig(28.08, 7.49, 10, "", srcBoost),
		"iris":    fig(3.64, 4.18, 10, "", srcBoost),
	},
	"lmnn": {
		"mnist":   fig(2.30, nan, 1, "11 h", srcFrob),
		"letters": fig(3.82, nan, 1, "1249 s", srcBoost),
		"bal":     fig(12.04, 5.59, 10, "5 s", srcBoost),
		"wine":    fig(3.46, 3.82, 10, "2 s", srcBoost),
		"iris":    fig(3.64, 2.87, 10, "2 s", srcBoost),
	},
	"itml": {
		"mnist":   fig(2.80, nan, 1, "1479 s", srcFrob),
		"letters": fig(7.20, nan, 1, "55 s", srcBoost),
		"bal":     fig(10.11, 4.06, 10, "8 s", srcBoost),
		"wine":    fig(28.46, 8.35, 10, "4 s", srcBoost),
		"iris":    fig(3.64, 3.59, 10, "4 s", srcBoost),
	},
	"boost-e": {
		"mnist":   fig(2.65, nan, 1, "2.83 h", srcBoost),
		"letters": fig(3.06, nan, 1, "3 s", srcBoost),
		"bal":     fig(10.11, 3.45, 10, "< 1 s", srcBoost),
		"wine":    fig(3.08, 3.53, 10, "2 s", srcBoost),
		"iris":    fig(3.18, 3.74, 10, "< 1 s", srcBoost),
	},
	"boost-e-mp": {
		"mnist":   fig(2.62, nan, 1, "", srcBoost),
		"letters": fig(2.80, nan, 1, "", srcBoost),
		"bal":     fig(10.22, 4.43, 10, "", srcBoost),
		"wine":    fig(1.92, 2.03, 10, "", srcBoost),
		"iris":    fig(3.18, 4.31, 10, "", srcBoost),
	},
	"boost-e-tc": {
		"mnist":   fig(2.20, nan, 1, "", srcBoost),
		"letters": fig(2.82, nan, 1, "", srcBoost),
		"bal":     fig(10.22, 2.39, 10, "", srcBoost),
		"wine":    fig(4.23, 3.82, 10, "", srcBoost),
		"iris":    fig(3.18, 3.07, 10, "", srcBoost),
	},
	"boost-e-mp-tc": {
		"mnist":   fig(2.34, nan, 1, "", srcBoost),
		"letters": fig(3.74, nan, 1, "", srcBoost),
		"bal":     fig(10.32, 3.09, 10, "", srcBoost),
		"wine":    fig(2.69, 3.17, 10, "", srcBoost),
		"iris":    fig(3.18, 4.31, 10, "", srcBoost),
	},
	"boost-l": {
		"mnist":   fig(2.66, nan, 1, "0.89 h", srcBoost),
		"letters": fig(2.80, nan, 1, "34 s", srcBoost),
		"bal":     fig(9.89, 3.12, 10, "", srcBoost),
		"wine":    fig(3.08, 3.03, 10, "", srcBoost),
		"iris":    fig(3.18, 3.74, 10, "", srcBoost),
	},
	"boost-l-mp": {
		"mnist":   fig(2.72, nan, 1, "", srcBoost),
		"letters": fig(2.70, nan, 1, "", srcBoost),
		"bal":     fig(10.22, 4.25, 10, "", srcBoost),
		"wine":    fig(1.15, 1.86, 10, "", srcBoost),
		"iris":    fig(3.18, 4.31, 10, "", srcBoost),
	},
	"boost-l-tc": {
		"mnist":   fig(2.10, nan, 1, "", srcBoost),
		"letters": fig(2.48, nan, 1, "", srcBoost),
		"bal":     fig(9.57, 3.18, 10, "", srcBoost),
		"wine":    fig(3.85, 4.05, 10, "", srcBoost),
		"iris":    fig(3.64, 2.87, 10, "", srcBoost),
	},
	"boost-l-mp-tc": {
		"mnist":   fig(2.11, nan, 1, "", srcBoost),
		"letters": fig(2.36, nan, 1, "", srcBoost),
		"bal":     fig(8.49, 3.71, 10, "", srcBoost),
		"wine":    fig(3.08, 3.03, 10, "", srcBoost),
		"iris":    fig(2.73, 2.35, 10, "", srcBoost),
	},
	"frobmetric": {
		"mnist":   fig(2.56, nan, 1, "280 s", srcFrob),
		"letters": fig(2.72, nan, 1, "13 s", srcFrob),
		"bal":     fig(9.68, 3.21, 10, "< 1 s", srcFrob),
		"wine":    fig(3.85, 4.44, 10, "< 1 s", srcFrob),
		"iris":    fig(3.64, 3.59, 10, "< 1 s", srcFrob),
	},
}

// table1Figure returns the published figure of a cell, or an unknown one.
func table1Figure(row, col string) Figure {
	if f, ok := table1Figures[row][col]; ok {
		return f
	}
	return Figure{Mean: nan, SD: nan}
}

// table1Intro introduces the section in the generated page.
const table1Intro = `The papers' metric-learning comparison on their own protocol: triplets
from each training point's 3 nearest same-class and 3 nearest other-class
points, 3-NN test error of the learned metric; MNIST (the 60,000 training
images followed by the 10,000 test images, rows 1–50,000 train, 50,001–60,000
validation, the rest test, projected onto 164 principal components of the
training rows) and letters (rows 1–10,500 train, 10,501–15,000 validation,
the rest test) on one fixed split, bal, wine and iris on 10 seeded 70/15/15
splits (seeds 1–10), every set on its raw features. Every method runs with
its defaults: its regularisation values (FrobMetric's C, ITML's γ) chosen
on the validation rows from the candidates its policy derives from the
data, no per-column setting. The multi-pass rows run 2 passes.`

// lettersSplit is what the letters cells share: the paper's split is its
// own, not published, and easier than psdlearn's.
const lettersSplit = "the paper's letters split is its own and not published. On 10 random splits of the same sizes (10,500/4,500/5,000, seeds 1–10, " +
	"`--split 0.525,0.225,0.25 --seed S`) psdlearn's Euclidean 3-NN error is 5.82–6.88 (6.26 on average), every one above the paper's 5.42: " +
	"its split is easier than any of them, and the learned metrics' errors move with it."

// nearestRule says how the letters notes' figures with the nearest-neighbour
// tie rule were measured.
const nearestRule = " Measured with psdlearn.Run as the table runs the row (lowest-label rule), then eval.KNNErrorTie with eval.TieNearest " +
	"on the model's Transform of the training and test rows."

// table1Notes explains the cells that are not reproduced, by row and
// column key ("frobmetric/wine"): what was measured, with the command that
// measures it (seeds 1–10 for the ten-split columns). A note is shown only
// while its cell is outside the tolerance.
var table1Notes = map[string]string{
	"lmnn/wine": "the paper's LMNN row on wine learns the factor L, not M (its footnote: learning M gave 20.77 ± 14.18). " +
		"psdlearn's default learns M and stops at its 1,000-iteration limit on the raw features, not converged; " +
		"M converged (`--iters 10000`, 1,800–5,500 iterations) gives 9.63, L (`--rank 13 --iters 10000`) 7.41, " +
		"and L with the push weight μ = 0.2 (`--rank 13 --iters 10000 --mu 0.2`) 5.92, within the paper's spread: " +
		"`psdlearn train --algo lmnn --data builtin:wine --seed S --rank 13 --iters 10000 --mu 0.2`.",
	"lmnn/bal": "bal's features are the integers 1–5, so most neighbours are at equal distances and LMNN's targets and impostors depend on the tie rule " +
		"(psdlearn: the lower row index). With the ties broken at random instead (every feature moved by less than 5e-4, seeded) LMNN gives 17.55 (Euclidean 20.11); " +
		"with μ = 0.2 instead of 0.5, 17.45 (14.57 with the random ties, within the paper's spread). " +
		"`psdlearn train --algo lmnn --data builtin:balance --seed S --mu 0.2`.",
	"itml/wine": "the paper's ITML does not improve on its raw-wine Euclidean error (28.46 against 28.08). psdlearn's ITML over the paper's slack grid: " +
		"γ = 0.01 gives 24.07, 0.1 23.33, 1 19.26, 10 16.30, chosen on the validation rows among them 17.78; " +
		"the strongest regularisation towards the identity (γ = 0.01) is within the paper's spread. psdlearn's default list {3, 10, 30} chooses larger γ. " +
		"`psdlearn train --algo itml --data builtin:wine --seed S --C 0.01`.",
	"euclidean/mnist": "the paper's Euclidean figure is that of the 784 raw pixels: psdlearn's 3-NN error there is 3.19, the paper's exactly; " +
		"the row is measured where the learners work, on the 164 principal components of the training rows (3.01; with a tied vote given to the " +
		"nearest neighbour's class, 3.08 on the pixels and 2.89 on the components). Measured with eval.KNNError on the same split's rows.",
	"euclidean/letters": lettersSplit + " On the fixed split, with a tied 3-NN vote given to the class of the nearest neighbour among the tied ones instead of the lowest label, the error is 5.64, within one standard error.",
	"lmnn/letters": lettersSplit + " LMNN with μ = 0.2 instead of 0.5 gives 4.02 on the fixed split, 3.82 with the nearest-neighbour tie rule (the paper's figure): " +
		"`psdlearn train --algo lmnn --data builtin:letters --split rows:10500,4500,5000 --mu 0.2`.",
	"itml/letters": "the paper's ITML is worse than its own Euclidean metric on letters (7.20 against 5.42); psdlearn's ITML over the paper's slack grid gives " +
		"6.14 (γ = 0.01), 6.12 (0.1), 5.62 (1), 4.72 (10, chosen on the validation rows), never above its Euclidean 6.22: this implementation of the same " +
		"objective does not reproduce a degradation. `psdlearn train --algo itml --data builtin:letters --split rows:10500,4500,5000 --C 0.01`.",
	"boost-e/letters":    lettersSplit + " BoostMetric-E over those 10 splits: 3.86 (lowest-label rule), 3.55 (3.16–3.92) with the nearest-neighbour rule; on the fixed split 3.64 with that rule.",
	"boost-l/letters":    lettersSplit + " BoostMetric-L over those 10 splits: 3.25 (lowest-label rule), 3.05 (2.76–3.42) with the nearest-neighbour rule, which covers the paper's 2.80; on the fixed split 3.16 with that rule.",
	"boost-e-mp/letters": lettersSplit + " BoostMetric-E, MP over those 10 splits: 3.37 (lowest-label rule), 3.14 (2.92–3.42) with the nearest-neighbour rule; on the fixed split 3.20 with that rule.",
	"boost-l-mp/letters": lettersSplit + " BoostMetric-L, MP over those 10 splits: 2.93 (lowest-label rule), 2.76 (2.56–3.06) with the nearest-neighbour rule, which covers the paper's 2.70; on the fixed split 2.94 with that rule.",
	"boost-e-tc/letters": lettersSplit + " BoostMetric-E, TC on the fixed split run to its 500-term limit (`Iters: 500`, uncertified, as the paper's J = 500): " +
		"3.22, and 3.12 with the nearest-neighbour rule. The table's run keeps the 100 terms the validation rows choose (stopped at 200): 3.26.",
	"boost-e-mp-tc/letters": "psdlearn is better than the paper here at every stopping point from 20 terms per pass on. Stopped after 10, 15 and 20 terms per pass " +
		"(2 passes) it gives 4.88, 3.86 and 3.50, after 25, 50, 100 and 200 terms per pass 3.16, 3.08, 3.04 and 3.00, run to the 500-term limit 3.00, the table's run (terms chosen on the validation rows) 3.14: " +
		"the paper's 3.74 lies between 15 and 20 terms per pass, as its MNIST figures of BoostMetric-L lie near 20 terms, what a metric far from the optimum " +
		"of the objective gives. It is worse than the paper's own E, E-MP and E-TC rows, which the fully run objective is not. " +
		"Measured with psdlearn.Run(BoostMetric{Loss: boost.Exp, Mode: boost.Corrective, Passes: 2, Iters: 10 … 200}) with the table's settings for the column.",
	"boost-l-tc/letters": lettersSplit + " BoostMetric-L, TC over those 10 splits, run to the 500-term limit (`Iters: 500`, uncertified, as the paper's J = 500): " +
		"2.99 (lowest-label rule), 2.82 (2.52–3.22) with the nearest-neighbour rule; on the fixed split 2.84 with that rule (3.04 with the lowest-label rule). " +
		"The table's run keeps the 25 terms the validation rows choose (validation error 2.96 at 25 terms, 3.07 at 50): 3.26." + nearestRule,
	"boost-l-mp-tc/letters": lettersSplit + " BoostMetric-L, MP, TC over those 10 splits with a limit of 500 terms per pass (`Iters: 500`; 4 of the runs converge before it): 2.86 (lowest-label rule), " +
		"2.70 (2.32–2.90) with the nearest-neighbour rule, which covers the paper's 2.36; on the fixed split 2.64 with that rule " +
		"(the same run gives 2.86 with the lowest-label rule; run to the 500-term limit 2.80, the table's run with terms chosen on the validation rows 2.84)." + nearestRule,
	"lmnn/mnist": "psdlearn is better than the paper here: its LMNN stops on its own criterion (relative objective change below 1e-5, " +
		"no new active triplet at the last impostor search) after 462 descent steps with 2.08. Stopped after 1, 3, 5 and 10 steps it gives " +
		"2.78, 2.54, 2.46 and 2.15 (2.72, 2.48, 2.39 and 2.09 with a tied vote given to the nearest neighbour's class): the paper's 2.30 " +
		"lies between 5 and 10 steps, what a metric far from the optimum of LMNN's objective gives. " +
		"Measured with psdlearn.Run(LMNN{Iters: 1, 3, 5 or 10}) with the table's settings for the column.",
	"frobmetric/mnist": "psdlearn is better than the paper here, with every C it tries: on the validation rows C = 0.1, 1, 10, 100 give test errors of " +
		"2.32, 2.08, 2.04, 2.18 (each solved to the certificate). The same solve at C = 10 stopped after 1, 3 and 10 L-BFGS-B iterations " +
		"(relative duality gap 0.995, 0.953, 0.504) gives 2.60, 2.37 and 2.25: the paper's 2.56 is what a metric far from the optimum of the objective gives. " +
		"Measured with frob.Learn (MetricOptions{C: 10, MaxIter: 1, 3 or 10, NewtonSteps: −1}) on the protocol's training rows and triplets.",
	"boost-e/mnist": "psdlearn is better than the paper here: the validation rows choose 50 terms (validation errors 2.26, 2.20 and 2.29 after 25, 50 " +
		"and 100 terms) and give 2.31; the same run to its 500-term limit gives 2.60, within one standard error of the paper's 2.65: the paper's " +
		"figure is that of more terms than the validation rows choose, which fit the training triplets more closely at a cost on the test rows. " +
		"Measured with psdlearn.Run(BoostMetric{Loss: boost.Exp, Iters: 500}) with the table's settings for the column.",
	"boost-e-mp/mnist": "psdlearn is better than the paper here: with the terms of each pass chosen on the validation rows (50, then 100) it gives 2.41; " +
		"run to the limit of 500 terms per pass it gives 2.71, within one standard error of the paper's 2.62: the paper's figure is that of " +
		"more terms than the validation rows choose. " +
		"Measured with psdlearn.Run(BoostMetric{Loss: boost.Exp, Passes: 2, Iters: 500}) with the table's settings for the column.",
	"boost-l/mnist": "psdlearn is better than the paper here at every stopping point from 25 terms on: the validation rows choose 50 terms and give 2.11; " +
		"run to its 500-term limit it gives 2.46. Stopped after 15, 20, 25, 50, 100 and 200 terms it gives 3.29, 2.78, 2.36, 2.11, 2.26 and 2.34: " +
		"the paper's 2.66 lies between 20 and 25 terms, what a metric far from the optimum of the objective gives; more terms than 50 fit the " +
		"training triplets more closely at a slight cost on the test rows, but never back up to the paper's figure. " +
		"Measured with psdlearn.Run(BoostMetric{Loss: boost.Logistic, Iters: 15 … 500}) with the table's settings for the column.",
	"boost-l-mp/mnist": "psdlearn is better than the paper here at every stopping point from 25 terms per pass on. Stopped after 15, 20, 25, 50 and " +
		"100 terms per pass (2 passes) it gives 3.31, 2.71, 2.36, 2.25 and 2.21, run to the limit of 500 terms per pass 2.49, the table's run " +
		"(the terms of each pass chosen on the validation rows: 50, then 105) 2.27: the paper's 2.72 is what 20 terms per pass give, a metric far " +
		"from the optimum of the objective. " +
		"Measured with psdlearn.Run(BoostMetric{Loss: boost.Logistic, Passes: 2, Iters: 15 … 500}) with the table's settings for the column.",
	"boost-e-tc/mnist": "psdlearn reaches the paper's figure before its 500-term limit and then fits the training triplets more closely at a cost on the " +
		"test rows. Stopped after 25, 50, 100 and 200 terms it gives 2.61, 2.22, 2.13 and 2.23, run to the 500-term limit 2.46: " +
		"the paper's 2.20 is what 50 to 200 terms give (within one standard error of the test set); the table's run keeps the 100 terms the " +
		"validation rows choose. " +
		"Measured with psdlearn.Run(BoostMetric{Loss: boost.Exp, Mode: boost.Corrective, Iters: 25 … 500}) with the table's settings for the column.",
	"boost-l-tc/mnist": "psdlearn reaches the paper's figure before its 500-term limit and then fits the training triplets more closely at a cost on the " +
		"test rows. Stopped after 25, 50, 100 and 200 terms it gives 2.45, 2.25, 2.17 and 2.20, run to the 500-term limit 2.35: " +
		"the paper's 2.10 is within one standard error of the test set of 100 terms' 2.17. The table's run keeps the 50 terms the validation rows " +
		"choose (validation error 2.01 at 50 terms, 2.04 at 100): 2.25. " +
		"Measured with psdlearn.Run(BoostMetric{Loss: boost.Logistic, Mode: boost.Corrective, Iters: 25 … 500}) with the table's settings for the column.",
	"boost-l-mp-tc/mnist": "psdlearn reaches the paper's figure before its limit of 500 terms per pass and then fits the training triplets more closely " +
		"at a cost on the test rows. Stopped after 25, 50 and 100 terms per pass (2 passes) it gives 2.36, 2.23 and 2.19, run to the limit " +
		"2.47: the paper's 2.11 is within one standard error of the test set of 100 terms per pass' 2.19. The table's run keeps the terms the " +
		"validation rows choose (50 in the first pass, 400 in the second): 2.28. " +
		"Measured with psdlearn.Run(BoostMetric{Loss: boost.Logistic, Mode: boost.Corrective, Passes: 2, Iters: 25 … 500}) with the table's settings for the column.",
	"frobmetric/bal": "psdlearn is better than the paper here. On bal the validation rows prefer small C: for C ≤ 0.1 every multiplier is at its bound " +
		"and the metric is (Σ_r A_r)₊, 5.11 on the test rows; C = 10 and C = 100 give 10.85, within the paper's spread, and the default list " +
		"{0.1, 1, 10, 100} without its downward extension gives 5.21: the paper's figure is that of larger C. " +
		"`psdlearn train --algo frobmetric --data builtin:balance --seed S --C 10`.",
}
