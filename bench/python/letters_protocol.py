#!/usr/bin/python3
"""The letters protocol of psdlearn, as a numpy/scipy + scikit-learn user writes it.

The baseline `psdlearn train` is compared with. Same data and
protocol as `psdlearn train --data builtin:letters --split rows:10500,4500,5000
--standardize` (k = 3): standardise on the training rows, LMNN triplets (each
training point's 3 nearest same-class targets x its 3 nearest other-class
impostors), then

  (a) BoostMetric, exponential loss, stage-wise (nu = 1e-7, up to 500 terms,
      stop when lambda_max < nu + 1e-8 * lambda_1), and
  (b) FrobMetric at one C (default 100): the dual
      max_{0 <= u <= C/m} sum(u) - 1/2 ||(sum_r u_r A_r)_+||_F^2 by L-BFGS-B,

each evaluated by 3-NN (KNeighborsClassifier) in the learned metric. Prints
per-phase seconds and errors as one JSON line. Run: see docs/howto-real-data.md,
"A Python baseline".
"""
import argparse
import json
import os
import time

import numpy as np
import scipy.linalg
import scipy.optimize
import scipy.special
import scipy.sparse as sp
from sklearn.neighbors import KNeighborsClassifier, NearestNeighbors
from sklearn.preprocessing import StandardScaler

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CSV = os.path.join(HERE, "..", "..", "datasets", "letters.csv")


def lmnn_triplets(X, y, k=3):
    """(i, j, l): j among i's k nearest same-class points, l among its k nearest others."""
    n = len(y)
    targets = np.empty((n, k), dtype=np.int64)
    impostors = np.empty((n, k), dtype=np.int64)
    for c in np.unique(y):
        same, other = np.flatnonzero(y == c), np.flatnonzero(y != c)
        nn = NearestNeighbors(n_neighbors=k + 1).fit(X[same])
        targets[same] = same[nn.kneighbors(return_distance=False)[:, :k]]  # excludes the point itself
        nn = NearestNeighbors(n_neighbors=k).fit(X[other])
        impostors[same] = other[nn.kneighbors(X[same], return_distance=False)]
    i = np.repeat(np.arange(n), k * k)
    j = np.repeat(targets, k, axis=1).ravel()
    l = np.tile(impostors, (1, k)).ravel()
    return i, j, l


def weighted_gram(X, i, j, l, u):
    """sum_r u_r A_r with A_r = (x_i - x_l)(x_i - x_l)^T - (x_i - x_j)(x_i - x_j)^T, as X^T L_W X."""
    n = X.shape[0]
    rows, cols = np.concatenate([i, i]), np.concatenate([l, j])
    W = sp.coo_matrix((np.concatenate([u, -u]), (rows, cols)), shape=(n, n)).tocsr()
    W = W + W.T
    L = sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W
    return X.T @ (L @ X)  # x^T L x = sum over pairs of w (x_a - x_b)^2


def margins(Z, i, j, l):
    """<A_r, M> for M = L L^T, given Z = X L."""
    return ((Z[i] - Z[l]) ** 2).sum(axis=1) - ((Z[i] - Z[j]) ** 2).sum(axis=1)


def knn_error(Ztr, ytr, Zte, yte, k=3):
    return float(np.mean(KNeighborsClassifier(n_neighbors=k).fit(Ztr, ytr).predict(Zte) != yte))


def boostmetric(X, i, j, l, nu=1e-7, iters=500, tol=1e-8):
    m, d = len(i), X.shape[1]
    rho = np.zeros(m)
    V, w = [], []
    stop_at = None
    for it in range(iters):
        u = np.exp(-rho - scipy.special.logsumexp(-rho))
        lam, v = scipy.linalg.eigh(weighted_gram(X, i, j, l, u), subset_by_index=[d - 1, d - 1])
        lam, v = lam[0], v[:, 0]
        if stop_at is None:
            stop_at = nu + tol * abs(lam)
        if lam < stop_at:
            break
        z = X @ v
        h = (z[i] - z[l]) ** 2 - (z[i] - z[j]) ** 2
        if h.min() >= nu:  # separable: the loss is unbounded below
            V.append(v)
            w.append(30 / h.min())
            break

        def deriv(t):  # d/dt of log sum exp(-rho - t h) + nu t
            e = -rho - t * h
            p = np.exp(e - scipy.special.logsumexp(e))
            return nu - p @ h

        hi = 1 / np.abs(h).max()
        while deriv(hi) < 0:
            hi *= 2
        t = scipy.optimize.brentq(deriv, 0, hi, xtol=1e-15, rtol=1e-12)
        V.append(v)
        w.append(t)
        rho += t * h
    Lf = np.array(V).T * np.sqrt(w)  # M = Lf Lf^T
    return Lf, len(w)


def frobmetric(X, i, j, l, C=100.0, maxiter=20000):
    m = len(i)

    def neg_dual(u):
        lam, V = scipy.linalg.eigh(weighted_gram(X, i, j, l, u))
        pos = lam > 0
        Lf = V[:, pos] * np.sqrt(lam[pos])
        g = 1 - margins(X @ Lf, i, j, l)
        return -(u.sum() - 0.5 * (lam[pos] ** 2).sum()), -g

    u, f, info = scipy.optimize.fmin_l_bfgs_b(neg_dual, np.zeros(m), bounds=[(0, C / m)] * m,
                                              factr=10, pgtol=1e-12, maxiter=maxiter)
    lam, V = scipy.linalg.eigh(weighted_gram(X, i, j, l, u))
    pos = lam > 0
    Lf = V[:, pos] * np.sqrt(lam[pos])
    primal = 0.5 * (lam[pos] ** 2).sum() + C / m * np.maximum(0, 1 - margins(X @ Lf, i, j, l)).sum()
    gap = (primal + f) / max(1, abs(primal))
    return Lf, info["nit"], gap


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", default=DEFAULT_CSV)
    ap.add_argument("--C", type=float, default=100.0)
    ap.add_argument("--algo", choices=["both", "boostmetric", "frobmetric"], default="both")
    args = ap.parse_args()
    out = {}
    t = time.perf_counter()
    raw = np.genfromtxt(args.csv, delimiter=",", skip_header=1, dtype=str)
    Xall, yall = raw[:, :-1].astype(float), np.unique(raw[:, -1], return_inverse=True)[1]
    out["load_s"] = time.perf_counter() - t
    t = time.perf_counter()
    sc = StandardScaler().fit(Xall[:10500])  # population deviation, as psdlearn
    Xtr, Xva, Xte = (sc.transform(Xall[a:b]) for a, b in [(0, 10500), (10500, 15000), (15000, 20000)])
    ytr, yva, yte = yall[:10500], yall[10500:15000], yall[15000:]
    out["preprocess_s"] = time.perf_counter() - t
    t = time.perf_counter()
    i, j, l = lmnn_triplets(Xtr, ytr)
    out["triplets_s"], out["triplets"] = time.perf_counter() - t, len(i)
    t = time.perf_counter()
    out["euclidean_test_error"] = knn_error(Xtr, ytr, Xte, yte)
    out["euclidean_eval_s"] = time.perf_counter() - t
    for name in ["boostmetric", "frobmetric"]:
        if args.algo not in ("both", name):
            continue
        t = time.perf_counter()
        if name == "boostmetric":
            Lf, its = boostmetric(Xtr, i, j, l)
        else:
            Lf, its, out["frobmetric_rel_gap"] = frobmetric(Xtr, i, j, l, C=args.C)
        out[name + "_train_s"], out[name + "_iterations"] = time.perf_counter() - t, its
        t = time.perf_counter()
        out[name + "_val_error"] = knn_error(Xtr @ Lf, ytr, Xva @ Lf, yva)
        out[name + "_test_error"] = knn_error(Xtr @ Lf, ytr, Xte @ Lf, yte)
        out[name + "_eval_s"] = time.perf_counter() - t
        phases = ["load_s", "preprocess_s", "triplets_s", name + "_train_s", name + "_eval_s", "euclidean_eval_s"]
        out[name + "_end_to_end_s"] = sum(out[k] for k in phases)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
