! cg.f90 - conjugate gradients whose dot products are MPI_Allreduce of
! DOUBLE PRECISION: the Fortran twin of cg.c (test/repro/run.sh), the same
! system, data, distribution and output, so under the reproducible mode
! both print the same bits. `cg D`: ranks 0 .. D-1 hold the rows.
program cg
  use mpi
  use checks_m
  use iso_fortran_env, only: int8, int64
  implicit none
  integer, parameter :: n_all = 6000, iters = 80
  integer :: ierr, rk, np, d, q, lo, n, it, i, g
  integer, allocatable :: counts(:), displs(:)
  double precision, allocatable :: x(:), r(:), p(:), ap(:), full(:)
  double precision :: rr, alpha, beta, rr1
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rk, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  d = arg_int(np)
  allocate (counts(np), displs(np))
  do q = 0, np - 1
    counts(q + 1) = 0
    if (q < d) counts(q + 1) = n_all / d + merge(1, 0, q < mod(n_all, d))
    displs(q + 1) = 0
    if (q > 0) displs(q + 1) = displs(q) + counts(q)
  end do
  lo = displs(rk + 1)
  n = counts(rk + 1)
  allocate (x(n + 1), r(n + 1), p(n + 1), ap(n + 1), full(0:n_all + 1))
  x = 0; full = 0
  do i = 0, n - 1 ! b: within 60 binades
    r(i + 1) = draw(lcg(int(1 + lo + i, int64)), 60_int64, 53)
    p(i + 1) = r(i + 1)
  end do
  rr = dot(r, r, n)
  do it = 1, iters
    call MPI_Allgatherv(p, n, MPI_DOUBLE_PRECISION, full(1), counts, displs, MPI_DOUBLE_PRECISION, &
                        MPI_COMM_WORLD, ierr)
    do i = 1, n
      g = lo + i - 1
      ap(i) = (2d0 + dble(mod(g, 7)) / 8d0 + dble(g) / n_all) * full(g + 1) - full(g) - full(g + 2)
    end do
    alpha = rr / dot(p, ap, n)
    do i = 1, n
      x(i) = x(i) + alpha * p(i)
      r(i) = r(i) - alpha * ap(i)
    end do
    rr1 = dot(r, r, n)
    beta = rr1 / rr
    rr = rr1
    do i = 1, n
      p(i) = r(i) + beta * p(i)
    end do
    if (rk == 0 .and. mod(it, 10) == 0) print '(a,i3,a,z16.16)', 'iteration ', it, '  r.r ', transfer(rr, 0_int64)
  end do
  call MPI_Allgatherv(x, n, MPI_DOUBLE_PRECISION, full(1), counts, displs, MPI_DOUBLE_PRECISION, &
                      MPI_COMM_WORLD, ierr)
  if (rk == 0) print '(a,z8.8)', 'solution hash ', fnv(transfer(full(1:n_all), [0_int8]))
  call MPI_Finalize(ierr)
contains
  function dot(a, b, k) result(gs)
    double precision, intent(in) :: a(:), b(:)
    integer, intent(in) :: k
    double precision :: s, gs
    integer :: j
    s = 0
    do j = 1, k
      s = s + a(j) * b(j)
    end do
    call MPI_Allreduce(s, gs, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end function
end program cg
