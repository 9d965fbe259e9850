! wide.f90 - vector sums of wide-range doubles: the Fortran twin of wide.c
! (test/repro/run.sh), the same cases (and the derived datatype's sum, not
! printed), data and output, so under the reproducible mode both print the
! same bits. `wide D`: ranks 0 .. D-1 hold the data, the others zeros.
program wide
  use mpi
  use checks_m
  use iso_fortran_env, only: int8, int32, int64, real32, real64
  implicit none
  integer, parameter :: lens(4) = [1, 7, 1000, 36000], scat = 1200
  integer :: ierr, rk, np, d, k, j, c, root, before, n, i, two, dup
  integer, allocatable :: counts(:)
  double precision, allocatable :: x(:), y(:), all(:)
  real :: xf(1000), yf(1000)
  double complex :: z(500), zs(500)
  character(len=40) :: name
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rk, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  d = arg_int(np)
  allocate (x(36000), y(36000), all(36000), counts(np))
  c = 0
  do k = 1, 4
    n = lens(k)
    x(1:n) = [(gen(rk, i, c, .false.), i = 0, n - 1)]
    call MPI_Allreduce(x, y, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    write (name, '(a,i0)') 'allreduce double n=', n
    call line(name, c, y, n)
    c = c + 1
  end do
  y(1:1000) = [(gen(rk, i, c, .false.), i = 0, 999)]
  call MPI_Allreduce(MPI_IN_PLACE, y, 1000, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call line('allreduce double n=1000 in-place', c, y, 1000)
  c = c + 1
  xf = [(real(gen(rk, i, c, .true.)), i = 0, 999)]
  call MPI_Allreduce(xf, yf, 1000, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierr)
  call line_float('allreduce float n=1000', c, yf, 1000)
  c = c + 1
  z = [(cmplx(gen(rk, 2 * i, c, .false.), gen(rk, 2 * i + 1, c, .false.), kind(1d0)), i = 0, 499)]
  call MPI_Allreduce(z, zs, 500, MPI_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
  y(1:1000:2) = real(zs)
  y(2:1000:2) = aimag(zs)
  call line('allreduce double complex n=500', c, y, 1000)
  c = c + 1
  do k = 3, 4
    do j = 0, 1
      n = lens(k)
      root = merge(np - 1, 0, j == 1)
      x(1:n) = [(gen(rk, i, c, .false.), i = 0, n - 1)]
      call MPI_Reduce(x, y, n, MPI_DOUBLE_PRECISION, MPI_SUM, root, MPI_COMM_WORLD, ierr)
      if (root /= 0 .and. rk == root) call MPI_Send(y, n, MPI_DOUBLE_PRECISION, 0, 6, MPI_COMM_WORLD, ierr)
      if (root /= 0 .and. rk == 0) &
        call MPI_Recv(y, n, MPI_DOUBLE_PRECISION, root, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      write (name, '(a,i0,a,a)') 'reduce double n=', n, ' root=', merge('last ', 'first', j == 1)
      call line(name, c, y, n)
      c = c + 1
    end do
  end do
  x(1:scat) = [(gen(rk, i, c, .false.), i = 0, scat - 1)]
  counts = scat / np
  call MPI_Reduce_scatter_block(x, y, scat / np, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call collect(all, y, counts)
  call line('reduce_scatter_block double n=1200', c, all, scat)
  c = c + 1
  x(1:scat) = [(gen(rk, i, c, .false.), i = 0, scat - 1)]
  before = 0
  do k = 0, np - 1 ! uneven: rank k gets about k + 1 shares
    counts(k + 1) = scat * 2 * (k + 1) / (np * (np + 1))
    if (k == np - 1) counts(k + 1) = scat - before
    before = before + counts(k + 1)
  end do
  call MPI_Reduce_scatter(x, y, counts, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call collect(all, y, counts)
  call line('reduce_scatter double n=1200', c, all, scat)
  ! A derived datatype of doubles stays MPI's, whatever MPI makes of it
  ! (MPICH 4.0.2 refuses MPI_SUM on it: errors return, on a duplicate).
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN, ierr)
  call MPI_Type_contiguous(2, MPI_DOUBLE_PRECISION, two, ierr)
  call MPI_Type_commit(two, ierr)
  call MPI_Allreduce(x, y, 500, two, MPI_SUM, dup, ierr)
  call MPI_Type_free(two, ierr)
  call MPI_Comm_free(dup, ierr)
  call MPI_Finalize(ierr)
contains
  ! Element i of rank q's input to case cs, as wide.c's gen().
  function gen(q, i, cs, f) result(v)
    integer, intent(in) :: q, i, cs
    logical, intent(in) :: f
    double precision :: v
    integer(int64), parameter :: widths(0:3) = [4_int64, 60_int64, 400_int64, 1800_int64]
    v = 0
    if (q >= d) return
    v = draw(1 + mod(q * 1000003_int64 + i * 7919_int64 + cs * 104729_int64, 2147483646_int64), &
             merge(26_int64, widths(mod(i / 64, 4)), f), merge(24, 53, f))
  end function

  ! The correctly rounded sum of v (as wide.c's fsum).
  function fsum(v) result(hi)
    double precision, intent(in) :: v(:)
    double precision :: part(64), hi, lo, a, b, t
    integer :: np_, k_, j_, i_
    np_ = 0; hi = 0; lo = 0
    do k_ = 1, size(v)
      a = v(k_)
      i_ = 0
      do j_ = 1, np_
        b = part(j_)
        if (abs(a) < abs(b)) then
          t = a; a = b; b = t
        end if
        t = a + b
        lo = b - (t - a)
        if (lo /= 0) then
          i_ = i_ + 1
          part(i_) = lo
        end if
        a = t
      end do
      np_ = i_ + 1
      part(np_) = a
    end do
    if (np_ == 0) return
    hi = part(np_); np_ = np_ - 1
    do while (np_ > 0)
      a = hi; b = part(np_); np_ = np_ - 1
      hi = a + b
      lo = b - (hi - a)
      if (lo /= 0) exit
    end do
    if (np_ > 0) then
      if ((lo < 0 .and. part(np_) < 0) .or. (lo > 0 .and. part(np_) > 0)) then
        b = lo * 2; a = hi + b
        if (b == a - hi) hi = a
      end if
    end if
  end function

  function want(i, cs, f) result(w)
    integer, intent(in) :: i, cs
    logical, intent(in) :: f
    double precision :: w, v(64)
    integer :: q
    do q = 0, np - 1
      v(q + 1) = gen(q, i, cs, f)
      if (f) v(q + 1) = real(real(v(q + 1), real32), real64)
    end do
    w = fsum(v(1:np))
  end function

  subroutine line(nm, cs, res, cnt)
    character(len=*), intent(in) :: nm
    integer, intent(in) :: cs, cnt
    double precision, intent(in) :: res(:)
    logical :: exact
    integer :: k_
    double precision :: w
    character(len=40) :: pad
    if (rk /= 0) return
    exact = .true.
    do k_ = 1, cnt
      w = want(k_ - 1, cs, .false.)
      exact = exact .and. transfer(res(k_), 0_int64) == transfer(w, 0_int64)
    end do
    pad = nm
    write (*, '(a,1x,z8.8,1x,z16.16,1x,a)') pad, fnv(transfer(res(1:cnt), [0_int8])), &
      transfer(res(1), 0_int64), trim(merge('correctly-rounded    ', 'not-correctly-rounded', exact))
  end subroutine

  subroutine line_float(nm, cs, res, cnt)
    character(len=*), intent(in) :: nm
    integer, intent(in) :: cs, cnt
    real, intent(in) :: res(:)
    logical :: exact
    integer :: k_
    real :: w
    character(len=40) :: pad
    if (rk /= 0) return
    exact = .true.
    do k_ = 1, cnt
      w = real(want(k_ - 1, cs, .true.), real32)
      exact = exact .and. transfer(res(k_), 0_int32) == transfer(w, 0_int32)
    end do
    pad = nm
    write (*, '(a,1x,z8.8,1x,z16.16,1x,a)') pad, fnv(transfer(res(1:cnt), [0_int8])), &
      int(transfer(res(1), 0_int32), int64) - merge(0_int64, -4294967296_int64, transfer(res(1), 0_int32) >= 0), &
      trim(merge('correctly-rounded    ', 'not-correctly-rounded', exact))
  end subroutine

  ! Rank 0 collects every rank's piece of a scattered result (point to point).
  subroutine collect(full, mine, cnts)
    double precision, intent(inout) :: full(:)
    double precision, intent(in) :: mine(:)
    integer, intent(in) :: cnts(:)
    integer :: q, at
    if (rk /= 0) then
      call MPI_Send(mine, cnts(rk + 1), MPI_DOUBLE_PRECISION, 0, 5, MPI_COMM_WORLD, ierr)
      return
    end if
    full(1:cnts(1)) = mine(1:cnts(1))
    at = cnts(1)
    do q = 1, np - 1
      call MPI_Recv(full(at + 1), cnts(q + 1), MPI_DOUBLE_PRECISION, q, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      at = at + cnts(q + 1)
    end do
  end subroutine
end program wide
