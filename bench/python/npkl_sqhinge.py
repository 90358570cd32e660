#!/usr/bin/python3
"""SimpleNPKL, squared hinge, on all 20,000 letters, as a numpy/scipy + scikit-learn user writes it.

The letters case of `psdlearn bench --suite algos --case "simplenpkl
sqhinge"`: standardise all 20,000 letters; the kNN graph (k = 50, union,
binary weights) and its normalised Laplacian L = I - D^-1/2 S D^-1/2;
pairwise constraints sampled as constraints.XingPairs does (random pairs
until the must-links leave 0.7 n components; T = +1 within a class, -1
across); then the paper's Algorithm 1 for 10 iterations: A_t = sum_c
alpha_c T_c E_c - L, its top 100 eigenpairs by scipy's eigsh (ARPACK, tol
1e-8), K_t = the positive part scaled to tr(K^2) = B = 1, alpha <- (alpha +
eta_t (1 - T K_ab - alpha/C))_+ with eta_t = 2C/(t+2), alpha0 = 1, C = 0.5;
finally k-means (26 clusters, 3 restarts) on the kernel's features V
sqrt(lambda) and the pairwise accuracy. Prints per-phase seconds, products
(ARPACK's operator applications) and the accuracy as one JSON line.

Run (see docs/howto-real-data.md, "A Python baseline"):
    OPENBLAS_NUM_THREADS=2 python3 bench/python/npkl_sqhinge.py
"""
import argparse
import json
import os
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from sklearn.cluster import KMeans
from sklearn.neighbors import NearestNeighbors
from sklearn.preprocessing import StandardScaler

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CSV = os.path.join(HERE, "..", "..", "datasets", "letters.csv")


def laplacian(X, k):
    n = X.shape[0]
    nn = NearestNeighbors(n_neighbors=k + 1).fit(X)
    _, idx = nn.kneighbors(X)
    rows = np.repeat(np.arange(n), k)
    cols = idx[:, 1:].ravel()
    S = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n))
    S = ((S + S.T) > 0).astype(np.float64)  # union, binary
    d = np.asarray(S.sum(axis=1)).ravel()
    dm = sp.diags(1 / np.sqrt(d))
    return sp.identity(n, format="csr") - dm @ S @ dm


def xing_pairs(y, ratio, rng):
    n = len(y)
    target = int(round(ratio * n))
    parent = np.arange(n)

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    comps, seen, a_l, b_l = n, set(), [], []
    while comps > target:
        a, b = rng.integers(n), rng.integers(n - 1)
        if b >= a:
            b += 1
        a, b = min(a, b), max(a, b)
        if (a, b) in seen:
            continue
        seen.add((a, b))
        a_l.append(a)
        b_l.append(b)
        if y[a] == y[b]:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[ra] = rb
                comps -= 1
    a, b = np.array(a_l), np.array(b_l)
    return a, b, np.where(y[a] == y[b], 1.0, -1.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", default=DEFAULT_CSV)
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument("--rank", type=int, default=100)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--C", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    phases = {}
    t = time.perf_counter()
    raw = np.genfromtxt(args.csv, delimiter=",", skip_header=1, dtype=str)
    X = StandardScaler().fit_transform(raw[:, :-1].astype(np.float64))
    _, y = np.unique(raw[:, -1], return_inverse=True)
    n = X.shape[0]
    phases["load"] = time.perf_counter() - t

    t = time.perf_counter()
    L = laplacian(X, args.k)
    phases["graph"] = time.perf_counter() - t

    t = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    a, b, T = xing_pairs(y, 0.7, rng)
    phases["constraints"] = time.perf_counter() - t

    t = time.perf_counter()
    C, B = args.C, 1.0
    alpha = np.ones(len(a))
    products, per_iter = 0, []
    lam = V = None
    for it in range(1, args.iters + 1):
        ti = time.perf_counter()
        w = 0.5 * alpha * T
        M = sp.csr_matrix((np.concatenate([w, w]), (np.concatenate([a, b]), np.concatenate([b, a]))), shape=(n, n))
        A = (M - L).tocsr()
        count = [0]

        def mv(x, A=A, count=count):
            count[0] += 1
            return A @ x

        op = spla.LinearOperator((n, n), matvec=mv, dtype=np.float64)
        vals, vecs = spla.eigsh(op, k=args.rank, which="LA", tol=1e-8)
        products += count[0]
        pos = vals > 1e-10
        vals, vecs = vals[pos], vecs[:, pos]
        lam = vals * np.sqrt(B / np.sum(vals**2))
        V = vecs
        Kab = np.einsum("ij,ij->i", V[a] * lam, V[b])
        eta = 2 * C / (it + 2)
        alpha = np.maximum(0.0, alpha + eta * (1 - T * Kab - alpha / C))
        per_iter.append(time.perf_counter() - ti)
    phases["learn"] = time.perf_counter() - t

    t = time.perf_counter()
    F = V * np.sqrt(lam)
    km = KMeans(n_clusters=len(np.unique(y)), n_init=3, random_state=args.seed).fit(F)
    phases["cluster"] = time.perf_counter() - t
    # Pairwise accuracy: the fraction of point pairs on which "same
    # cluster" agrees with "same class" (counted from the contingency table).
    cont = np.zeros((km.labels_.max() + 1, y.max() + 1))
    np.add.at(cont, (km.labels_, y), 1)
    pairs = n * (n - 1) / 2
    same_both = (cont * (cont - 1) / 2).sum()
    same_cluster = (cont.sum(1) * (cont.sum(1) - 1) / 2).sum()
    same_class = (cont.sum(0) * (cont.sum(0) - 1) / 2).sum()
    acc = (pairs - same_cluster - same_class + 2 * same_both) / pairs
    print(json.dumps({"n": n, "constraints": int(len(a)), "rank": int(len(lam)), "products": products,
                      "seconds_per_iteration": per_iter, "phases": phases,
                      "total": sum(phases.values()), "accuracy": acc}))


if __name__ == "__main__":
    main()
