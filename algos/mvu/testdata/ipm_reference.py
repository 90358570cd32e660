#!/usr/bin/python3
"""Interior-point reference optimum of a small MVU problem.

Solves the maximum variance unfolding SDP of the paper's inequality form,

    max tr X  s.t.  X ⪰ 0,  X_aa + X_bb − 2 X_ab ≤ d_ab²  (kNN edges),  1ᵀX1 = 0,

with CVXOPT's primal-dual interior-point cone solver (Debian python3-cvxopt
1.3.0, solvers.conelp) on a 60-point Swiss roll, and writes the problem
(points, edges, squared distances in units of their mean) and the solution
(tr X*, ‖X*‖_F², the leading eigenvalues and eigenvectors of X*, and the
dual multipliers y_e ≥ 0, z with Σ y_e A_e + z·11ᵀ − I ⪰ 0) as JSON.
algos/mvu's TestIPMReference compares the Frobenius-regularised solve with it.

    /usr/bin/python3 algos/mvu/testdata/ipm_reference.py > algos/mvu/testdata/ipm_mvu_60.json
"""
import json
import sys

import numpy as np
from cvxopt import matrix, spmatrix, solvers
import cvxopt

N, K, SEED = 60, 6, 7

rng = np.random.default_rng(SEED)
t = 1.5 * np.pi * (1 + 2 * rng.random(N))
h = 10 * rng.random(N)
pts = np.column_stack([t * np.cos(t), h, t * np.sin(t)])

# Undirected k-nearest-neighbour edges (a < b), ties by index.
d2full = ((pts[:, None, :] - pts[None, :, :]) ** 2).sum(-1)
edges = set()
for i in range(N):
    order = sorted((d2full[i, j], j) for j in range(N) if j != i)
    for _, j in order[:K]:
        edges.add((min(i, j), max(i, j)))
edges = sorted(edges)
d2 = np.array([d2full[a, b] for a, b in edges])
d2 /= d2.mean()  # units of the mean squared neighbour distance, as mvu.Embed

# Connectivity (MVU needs a connected graph).
parent = list(range(N))
def find(a):
    while parent[a] != a:
        parent[a] = parent[parent[a]]
        a = parent[a]
    return a
for a, b in edges:
    parent[find(a)] = find(b)
assert len({find(i) for i in range(N)}) == 1, "kNN graph not connected"

# Variables: x_k for the entries X_ij, i <= j (column of the lower triangle).
idx = {}
for j in range(N):
    for i in range(j, N):
        idx[(i, j)] = len(idx)
nv = len(idx)
def var(i, j):
    return idx[(max(i, j), min(i, j))]

c = matrix(0.0, (nv, 1))
for i in range(N):
    c[var(i, i)] = -1.0  # minimise −tr X

m = len(edges)
Gv, Gi, Gj = [], [], []
for e, (a, b) in enumerate(edges):  # linear inequalities ⟨A_e, X⟩ ≤ d²
    for v, k in ((1.0, var(a, a)), (1.0, var(b, b)), (-2.0, var(a, b))):
        Gv.append(v); Gi.append(e); Gj.append(k)
for j in range(N):  # S = X in the PSD cone: −vec(X) + S = 0
    for i in range(N):
        Gv.append(-1.0); Gi.append(m + j * N + i); Gj.append(var(i, j))
G = spmatrix(Gv, Gi, Gj, (m + N * N, nv))
hh = matrix(0.0, (m + N * N, 1))
for e in range(m):
    hh[e] = float(d2[e])
Av, Aj = [], []
for (i, j), k in idx.items():
    Av.append(1.0 if i == j else 2.0); Aj.append(k)
A = spmatrix(Av, [0] * len(Av), Aj, (1, nv))
b = matrix(0.0, (1, 1))

solvers.options.update({"show_progress": False, "abstol": 1e-9, "reltol": 1e-9, "feastol": 1e-9, "maxiters": 100})
sol = solvers.conelp(c, G, hh, {"l": m, "q": [], "s": [N]}, A, b)
if sol["status"] != "optimal":
    sys.exit("cvxopt: " + sol["status"])

x = np.array(sol["x"]).ravel()
X = np.zeros((N, N))
for (i, j), k in idx.items():
    X[i, j] = X[j, i] = x[k]
w, V = np.linalg.eigh(X)
w, V = w[::-1], V[:, ::-1]
y = np.array(sol["z"]).ravel()[:m]  # multipliers of the edge inequalities
zc = float(sol["y"][0])             # multiplier of 1ᵀX1 = 0
json.dump({
    "solver": "cvxopt %s solvers.conelp (abstol = reltol = feastol = 1e-9)" % cvxopt.__version__,
    "script": "algos/mvu/testdata/ipm_reference.py",
    "n": N, "k": K, "seed": SEED, "status": sol["status"],
    "primal_objective": sol["primal objective"], "dual_objective": sol["dual objective"],
    "gap": sol["gap"], "relative_gap": sol["relative gap"],
    "points": pts.tolist(), "edges": [list(e) for e in edges], "dist2": d2.tolist(),
    "trace": float(np.trace(X)), "fro2": float((X * X).sum()),
    "eigenvalues": w[:5].tolist(), "vectors": V[:, :2].T.tolist(),
    "y": y.tolist(), "z": zc,
}, sys.stdout)
sys.stdout.write("\n")
