! colls.f90 - an unmodified Fortran MPI program for the redcoll drop-in
! (test/fortran/run.sh).
!
! Uses only the mpi module and knows nothing of redcoll. Runs every
! collective the drop-in serves on Fortran's datatypes: INTEGER and its
! sized kinds, REAL, DOUBLE PRECISION, REAL4/8, LOGICAL, the complex types,
! the MINLOC/MAXLOC pairs 2INTEGER, 2REAL and 2DOUBLE_PRECISION, CHARACTER
! in the data-movement collectives, Fortran user ops (commutative, and a
! non-commutative one on a derived type), MPI_IN_PLACE, every root, zero
! counts, and calls that pass through (complex MPI_PROD, REAL16). Data are
! small integers, or reals that hold them, so every sum is exact whatever
! the order. On MPI_COMM_WORLD, a duplicate and a split communicator with
! its ranks reversed; `colls world` runs MPI_COMM_WORLD only.
!
! Every rank checks its results against a sequential reference; rank 0
! prints one line per rank and case: name, ok or WRONG, and a hash of the
! result's bytes. run.sh compares the output with and without LD_PRELOAD.
module log_m
  use mpi
  use checks_m
  use iso_fortran_env, only: int8, int16, int32, int64, real32, real64
  implicit none
  integer, parameter :: maxcases = 600
  character(len=72) :: names(maxcases)
  integer :: oks(maxcases)
  integer(int64) :: hashes(maxcases)
  integer :: ncases = 0
contains
  subroutine report(name, bytes, ok)
    character(len=*), intent(in) :: name
    integer(int8), intent(in) :: bytes(:)
    logical, intent(in) :: ok
    if (ncases == maxcases) then
      print '(a)', 'too many cases'
      call MPI_Abort(MPI_COMM_WORLD, 2, ncases)
    end if
    ncases = ncases + 1
    names(ncases) = name
    oks(ncases) = merge(1, 0, ok)
    hashes(ncases) = fnv(bytes)
  end subroutine

  ! Rank 0 prints every rank's cases in rank order (point-to-point only);
  ! returns the number of WRONG cases.
  function print_logs() result(wrong)
    integer :: wrong, w, p, q, i, ierr, n
    integer :: o(maxcases)
    integer(int64) :: h(maxcases)
    call MPI_Comm_rank(MPI_COMM_WORLD, w, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, p, ierr)
    wrong = count(oks(1:ncases) == 0)
    if (w /= 0) then
      call MPI_Send(ncases, 1, MPI_INTEGER, 0, 776, MPI_COMM_WORLD, ierr)
      call MPI_Send(oks, ncases, MPI_INTEGER, 0, 777, MPI_COMM_WORLD, ierr)
      call MPI_Send(hashes, ncases, MPI_INTEGER8, 0, 778, MPI_COMM_WORLD, ierr)
      return
    end if
    do q = 0, p - 1
      n = ncases
      o(1:n) = oks(1:n)
      h(1:n) = hashes(1:n)
      if (q > 0) then
        call MPI_Recv(n, 1, MPI_INTEGER, q, 776, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        call MPI_Recv(o, n, MPI_INTEGER, q, 777, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        call MPI_Recv(h, n, MPI_INTEGER8, q, 778, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        wrong = wrong + count(o(1:n) == 0)
      end if
      do i = 1, n
        write (*, '(a,i0,a,a,1x,a,1x,z8.8)') 'rank ', q, ': ', names(i), &
          merge('ok   ', 'WRONG', o(i) /= 0), h(i)
      end do
    end do
  end function
end module log_m

module cases_m
  use log_m
  implicit none
  integer, parameter :: counts(5) = [0, 1, 7, 1000, 20000]
contains
  integer function val(r, i)
    integer, intent(in) :: r, i
    val = mod(r * 131 + i * 7919 + 17, 1000) - 500
  end function

  ! sum over ranks 0 .. p-1 of val(q, i)
  integer function sum_over(p, i)
    integer, intent(in) :: p, i
    integer :: q
    sum_over = 0
    do q = 0, p - 1
      sum_over = sum_over + val(q, i)
    end do
  end function

  ! Whether (value, index) is the MINLOC (MAXLOC when mx) of mod(val(q, i), m)
  ! over the ranks q: the least (greatest) value, the lowest rank on a tie.
  logical function loc_ok(m, mx, p, i, value, index)
    integer, intent(in) :: m, p, i
    logical, intent(in) :: mx
    double precision, intent(in) :: value, index
    integer :: q, v, at
    v = mod(val(0, i), m)
    at = 0
    do q = 1, p - 1
      if (merge(mod(val(q, i), m) > v, mod(val(q, i), m) < v, mx)) then
        v = mod(val(q, i), m)
        at = q
      end if
    end do
    loc_ok = value == dble(v) .and. index == dble(at)
  end function

  subroutine whoami(comm, r, p)
    integer, intent(in) :: comm
    integer, intent(out) :: r, p
    integer :: ierr
    call MPI_Comm_rank(comm, r, ierr)
    call MPI_Comm_size(comm, p, ierr)
  end subroutine

  function label(what, lbl) result(s)
    character(len=*), intent(in) :: what, lbl
    character(len=72) :: s
    s = what // ' [' // lbl // ']'
  end function

  ! ---- reductions -----------------------------------------------------------------

  subroutine t_allreduce(comm, lbl)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: lbl
    integer :: r, p, k, ip, n, i, ierr
    integer, allocatable :: a(:), b(:)
    character(len=64) :: what
    call whoami(comm, r, p)
    do k = 1, size(counts)
      do ip = 0, 1
        n = counts(k)
        allocate (a(max(n, 1)), b(max(n, 1)))
        a = [(val(r, i), i = 0, size(a) - 1)]
        b = -7
        if (ip == 1) then
          b = a
          call MPI_Allreduce(MPI_IN_PLACE, b, n, MPI_INTEGER, MPI_SUM, comm, ierr)
        else
          call MPI_Allreduce(a, b, n, MPI_INTEGER, MPI_SUM, comm, ierr)
        end if
        write (what, '(a,i0,a)') 'allreduce sum integer n=', n, merge(' in-place', '         ', ip == 1)
        call report(label(trim(what), lbl), transfer(b(1:n), [0_int8]), &
                    ierr == MPI_SUCCESS .and. all(b(1:n) == [(sum_over(p, i), i = 0, n - 1)]))
        deallocate (a, b)
      end do
    end do
  end subroutine

  ! Predefined ops on every Fortran type, 13 elements.
  subroutine t_types(comm, lbl)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: lbl
    integer, parameter :: n = 13
    integer :: r, p, i, q, ierr, v
    integer(int8) :: i1(n), o1(n)
    integer(int16) :: i2(n), o2(n)
    integer(int32) :: i4(n), o4(n)
    integer(int64) :: i8(n), o8(n)
    integer :: ia(n), io(n), want(n)
    real :: ra(n), ro(n)
    real(real32) :: r4(n), q4(n)
    real(real64) :: r8(n), q8(n)
    double precision :: da(n), dq(n)
    logical :: la(n), lo(n), lw(n)
    integer :: pi(2, n), po(2, n)
    real :: pr(2, n), pro(2, n)
    double precision :: pd(2, n), pdo(2, n)
    complex :: ca(n), co(n)
    double complex :: za(n), zo(n)
    complex(real32) :: c8(n), c8o(n)
    complex(real64) :: c16(n), c16o(n)
    call whoami(comm, r, p)
    do i = 1, n
      v = val(r, i)
      i1(i) = int(mod(v, 25), int8)
      i2(i) = int(v * 60, int16)
      i4(i) = v * 1000
      i8(i) = int(v, int64) * 2_int64**40
      ia(i) = v
      ra(i) = real(v) * 0.25
      r4(i) = real(v, real32) * 0.5
      r8(i) = real(v, real64) * 0.125d0
      da(i) = real(v, kind(1d0)) * 0.5d0
      la(i) = mod(abs(v), 3) /= 0
      pi(1, i) = mod(v, 7); pi(2, i) = r
      pr(1, i) = real(mod(v, 5)); pr(2, i) = real(r)
      pd(1, i) = real(mod(v, 4), kind(1d0)); pd(2, i) = real(r, kind(1d0))
      ca(i) = cmplx(real(v), real(2 * v))
      za(i) = cmplx(real(v, kind(1d0)) * 0.5d0, real(-v, kind(1d0)), kind(1d0))
      c8(i) = cmplx(real(v, real32), 1.5_real32, real32)
      c16(i) = cmplx(real(r, real64), real(v, real64) * 0.25_real64, real64)
    end do

    call MPI_Allreduce(i1, o1, n, MPI_INTEGER1, MPI_SUM, comm, ierr)
    call report(label('allreduce sum integer1', lbl), transfer(o1, [0_int8]), &
                all(o1 == [(int(sum([(mod(val(q, i), 25), q = 0, p - 1)]), int8), i = 1, n)]))
    call MPI_Allreduce(i2, o2, n, MPI_INTEGER2, MPI_SUM, comm, ierr)
    call report(label('allreduce sum integer2', lbl), transfer(o2, [0_int8]), &
                all(o2 == [(int(sum_over(p, i) * 60, int16), i = 1, n)]))
    call MPI_Allreduce(i4, o4, n, MPI_INTEGER4, MPI_SUM, comm, ierr)
    call report(label('allreduce sum integer4', lbl), transfer(o4, [0_int8]), &
                all(o4 == [(sum_over(p, i) * 1000, i = 1, n)]))
    call MPI_Allreduce(i8, o8, n, MPI_INTEGER8, MPI_SUM, comm, ierr)
    call report(label('allreduce sum integer8', lbl), transfer(o8, [0_int8]), &
                all(o8 == [(int(sum_over(p, i), int64) * 2_int64**40, i = 1, n)]))
    call MPI_Allreduce(ia, io, n, MPI_INTEGER, MPI_MAX, comm, ierr)
    call report(label('allreduce max integer', lbl), transfer(io, [0_int8]), &
                all(io == [(maxval([(val(q, i), q = 0, p - 1)]), i = 1, n)]))
    call MPI_Allreduce(ia, io, n, MPI_INTEGER, MPI_MIN, comm, ierr)
    call report(label('allreduce min integer', lbl), transfer(io, [0_int8]), &
                all(io == [(minval([(val(q, i), q = 0, p - 1)]), i = 1, n)]))
    ia = 1 + mod(abs(ia), 3)
    call MPI_Allreduce(ia, io, n, MPI_INTEGER, MPI_PROD, comm, ierr)
    call report(label('allreduce prod integer', lbl), transfer(io, [0_int8]), &
                all(io == [(product([(1 + mod(abs(val(q, i)), 3), q = 0, p - 1)]), i = 1, n)]))
    ia = [(val(r, i) * 7919 + r, i = 1, n)]
    call MPI_Allreduce(ia, io, n, MPI_INTEGER, MPI_BXOR, comm, ierr)
    do i = 1, n
      want(i) = 0
      do q = 0, p - 1
        want(i) = ieor(want(i), val(q, i) * 7919 + q)
      end do
    end do
    call report(label('allreduce bxor integer', lbl), transfer(io, [0_int8]), all(io == want))
    call MPI_Allreduce(ia, io, n, MPI_INTEGER, MPI_BAND, comm, ierr)
    do i = 1, n
      want(i) = -1
      do q = 0, p - 1
        want(i) = iand(want(i), val(q, i) * 7919 + q)
      end do
    end do
    call report(label('allreduce band integer', lbl), transfer(io, [0_int8]), all(io == want))
    call MPI_Allreduce(ia, io, n, MPI_INTEGER, MPI_BOR, comm, ierr)
    do i = 1, n
      want(i) = 0
      do q = 0, p - 1
        want(i) = ior(want(i), val(q, i) * 7919 + q)
      end do
    end do
    call report(label('allreduce bor integer', lbl), transfer(io, [0_int8]), all(io == want))

    call MPI_Allreduce(ra, ro, n, MPI_REAL, MPI_SUM, comm, ierr)
    call report(label('allreduce sum real', lbl), transfer(ro, [0_int8]), &
                all(ro == [(real(sum_over(p, i)) * 0.25, i = 1, n)]))
    call MPI_Allreduce(da, dq, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
    call report(label('allreduce sum double precision', lbl), transfer(dq, [0_int8]), &
                all(dq == [(real(sum_over(p, i), kind(1d0)) * 0.5d0, i = 1, n)]))
    call MPI_Allreduce(r4, q4, n, MPI_REAL4, MPI_SUM, comm, ierr)
    call report(label('allreduce sum real4', lbl), transfer(q4, [0_int8]), &
                all(q4 == [(real(sum_over(p, i), real32) * 0.5, i = 1, n)]))
    call MPI_Allreduce(r8, q8, n, MPI_REAL8, MPI_SUM, comm, ierr)
    call report(label('allreduce sum real8', lbl), transfer(q8, [0_int8]), &
                all(q8 == [(real(sum_over(p, i), real64) * 0.125d0, i = 1, n)]))
    call MPI_Allreduce(ra, ro, n, MPI_REAL, MPI_MAX, comm, ierr)
    call report(label('allreduce max real', lbl), transfer(ro, [0_int8]), &
                all(ro == [(real(maxval([(val(q, i), q = 0, p - 1)])) * 0.25, i = 1, n)]))
    call MPI_Allreduce(da, dq, n, MPI_DOUBLE_PRECISION, MPI_MIN, comm, ierr)
    call report(label('allreduce min double precision', lbl), transfer(dq, [0_int8]), &
                all(dq == [(real(minval([(val(q, i), q = 0, p - 1)]), kind(1d0)) * 0.5d0, i = 1, n)]))
    da = [(2d0**mod(val(r, i), 9), i = 1, n)]
    call MPI_Allreduce(da, dq, n, MPI_DOUBLE_PRECISION, MPI_PROD, comm, ierr)
    call report(label('allreduce prod double precision', lbl), transfer(dq, [0_int8]), &
                all(dq == [(2d0**sum([(mod(val(q, i), 9), q = 0, p - 1)]), i = 1, n)]))

    call MPI_Allreduce(la, lo, n, MPI_LOGICAL, MPI_LAND, comm, ierr)
    lw = [(all([(mod(abs(val(q, i)), 3) /= 0, q = 0, p - 1)]), i = 1, n)]
    call report(label('allreduce land logical', lbl), transfer(lo, [0_int8]), all(lo .eqv. lw))
    call MPI_Allreduce(la, lo, n, MPI_LOGICAL, MPI_LOR, comm, ierr)
    lw = [(any([(mod(abs(val(q, i)), 3) /= 0, q = 0, p - 1)]), i = 1, n)]
    call report(label('allreduce lor logical', lbl), transfer(lo, [0_int8]), all(lo .eqv. lw))
    call MPI_Allreduce(la, lo, n, MPI_LOGICAL, MPI_LXOR, comm, ierr)
    lw = [(mod(count([(mod(abs(val(q, i)), 3) /= 0, q = 0, p - 1)]), 2) == 1, i = 1, n)]
    call report(label('allreduce lxor logical', lbl), transfer(lo, [0_int8]), all(lo .eqv. lw))

    call MPI_Allreduce(pi, po, n, MPI_2INTEGER, MPI_MINLOC, comm, ierr)
    call report(label('allreduce minloc 2integer', lbl), transfer(po, [0_int8]), &
                all([(loc_ok(7, .false., p, i, dble(po(1, i)), dble(po(2, i))), i = 1, n)]))
    call MPI_Allreduce(pi, po, n, MPI_2INTEGER, MPI_MAXLOC, comm, ierr)
    call report(label('allreduce maxloc 2integer', lbl), transfer(po, [0_int8]), &
                all([(loc_ok(7, .true., p, i, dble(po(1, i)), dble(po(2, i))), i = 1, n)]))
    call MPI_Allreduce(pr, pro, n, MPI_2REAL, MPI_MINLOC, comm, ierr)
    call report(label('allreduce minloc 2real', lbl), transfer(pro, [0_int8]), &
                all([(loc_ok(5, .false., p, i, dble(pro(1, i)), dble(pro(2, i))), i = 1, n)]))
    call MPI_Allreduce(pr, pro, n, MPI_2REAL, MPI_MAXLOC, comm, ierr)
    call report(label('allreduce maxloc 2real', lbl), transfer(pro, [0_int8]), &
                all([(loc_ok(5, .true., p, i, dble(pro(1, i)), dble(pro(2, i))), i = 1, n)]))
    call MPI_Allreduce(pd, pdo, n, MPI_2DOUBLE_PRECISION, MPI_MINLOC, comm, ierr)
    call report(label('allreduce minloc 2double precision', lbl), transfer(pdo, [0_int8]), &
                all([(loc_ok(4, .false., p, i, pdo(1, i), pdo(2, i)), i = 1, n)]))
    call MPI_Reduce(pd, pdo, n, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, p - 1, comm, ierr)
    if (r /= p - 1) pdo = 0
    call report(label('reduce maxloc 2double precision', lbl), transfer(pdo, [0_int8]), &
                r /= p - 1 .or. all([(loc_ok(4, .true., p, i, pdo(1, i), pdo(2, i)), i = 1, n)]))

    call MPI_Allreduce(ca, co, n, MPI_COMPLEX, MPI_SUM, comm, ierr)
    call report(label('allreduce sum complex', lbl), transfer(co, [0_int8]), &
                all(co == [(cmplx(real(sum_over(p, i)), real(2 * sum_over(p, i))), i = 1, n)]))
    call MPI_Allreduce(za, zo, n, MPI_DOUBLE_COMPLEX, MPI_SUM, comm, ierr)
    call report(label('allreduce sum double complex', lbl), transfer(zo, [0_int8]), &
                all(zo == [(cmplx(real(sum_over(p, i), kind(1d0)) * 0.5d0, &
                                  real(-sum_over(p, i), kind(1d0)), kind(1d0)), i = 1, n)]))
    call MPI_Allreduce(c8, c8o, n, MPI_COMPLEX8, MPI_SUM, comm, ierr)
    call report(label('allreduce sum complex8', lbl), transfer(c8o, [0_int8]), &
                all(c8o == [(cmplx(real(sum_over(p, i), real32), 1.5_real32 * p, real32), i = 1, n)]))
    call MPI_Reduce(c16, c16o, n, MPI_COMPLEX16, MPI_SUM, 0, comm, ierr)
    if (r /= 0) c16o = 0
    call report(label('reduce sum complex16', lbl), transfer(c16o, [0_int8]), r /= 0 .or. &
                all(c16o == [(cmplx(real(p * (p - 1) / 2, real64), real(sum_over(p, i), real64) * 0.25_real64, &
                                    real64), i = 1, n)]))
  end subroutine

  ! What passes through: MPI_PROD on complex; REAL16, whose parts are
  ! gfortran's binary128 (MPICH 4.0.2 reduces them as C's long double, so
  ! its results are wrong: the case checks only that they are MPI's, the
  ! same bytes with and without the drop-in).
  subroutine t_passthrough(comm, lbl)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: lbl
    integer, parameter :: n = 5, qp = selected_real_kind(30)
    integer :: r, p, ierr, i
    complex :: ca(n), co(n), w
    real(qp) :: xa(n), xo(n)
    call whoami(comm, r, p)
    ca = (0.0, 1.0)
    call MPI_Allreduce(ca, co, n, MPI_COMPLEX, MPI_PROD, comm, ierr)
    w = (1.0, 0.0)
    do i = 1, p
      w = w * (0.0, 1.0)
    end do
    call report(label('allreduce prod complex', lbl), transfer(co, [0_int8]), all(co == w))
    xa = [(real(val(r, i), qp) / 3, i = 1, n)]
    call MPI_Allreduce(xa, xo, n, MPI_REAL16, MPI_MAX, comm, ierr)
    call report(label('allreduce max real16 (as MPI has it)', lbl), transfer(xo, [0_int8]), &
                ierr == MPI_SUCCESS)
  end subroutine

  ! Reduce to every root, double precision, in place at the root or not.
  subroutine t_reduce(comm, lbl)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: lbl
    integer, parameter :: rc(4) = [0, 1, 500, 3000]
    integer :: r, p, k, root, ip, n, i, ierr
    double precision, allocatable :: a(:), b(:)
    character(len=64) :: what
    logical :: ok
    call whoami(comm, r, p)
    do k = 1, size(rc)
      do root = 0, p - 1
        do ip = 0, 1
          n = rc(k)
          if (ip == 1 .and. root /= 0 .and. n * 8 > 2000) cycle ! MPICH 4.0.2 crashes there
          allocate (a(max(n, 1)), b(max(n, 1)))
          a = [(real(val(r, i), kind(1d0)) * 0.5d0, i = 0, size(a) - 1)]
          b = -1d0
          if (ip == 1 .and. r == root) then
            b = a
            call MPI_Reduce(MPI_IN_PLACE, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, root, comm, ierr)
          else
            call MPI_Reduce(a, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, root, comm, ierr)
          end if
          ok = ierr == MPI_SUCCESS
          if (r == root) ok = ok .and. all(b(1:n) == [(real(sum_over(p, i), kind(1d0)) * 0.5d0, i = 0, n - 1)])
          write (what, '(a,i0,a,i0,a)') 'reduce sum double precision n=', n, ' root=', root, &
            merge(' in-place', '         ', ip == 1)
          call report(label(trim(what), lbl), transfer(b(1:n), [0_int8]), ok)
          deallocate (a, b)
        end do
      end do
    end do
  end subroutine

  ! Reduce_scatter with irregular counts (integer), reduce_scatter_block (real).
  subroutine t_reduce_scatter(comm, lbl)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: lbl
    integer, parameter :: per(3) = [0, 1, 100]
    integer :: r, p, k, ip, n, i, ierr, before, total
    integer, allocatable :: a(:), b(:), rcounts(:)
    real, allocatable :: x(:), y(:)
    character(len=64) :: what
    call whoami(comm, r, p)
    allocate (rcounts(p))
    do k = 1, size(per)
      do ip = 0, 1
        rcounts = [(mod(i * 7 + per(k), 5) * per(k), i = 0, p - 1)]
        total = sum(rcounts)
        before = sum(rcounts(1:r))
        n = rcounts(r + 1)
        allocate (a(max(total, 1)), b(max(total, 1)))
        a = [(val(r, i), i = 0, size(a) - 1)]
        b = -3
        if (ip == 1) then
          b = a
          call MPI_Reduce_scatter(MPI_IN_PLACE, b, rcounts, MPI_INTEGER, MPI_SUM, comm, ierr)
        else
          call MPI_Reduce_scatter(a, b, rcounts, MPI_INTEGER, MPI_SUM, comm, ierr)
        end if
        write (what, '(a,i0,a)') 'reduce_scatter sum integer per=', per(k), merge(' in-place', '         ', ip == 1)
        call report(label(trim(what), lbl), transfer(b(1:n), [0_int8]), &
                    all(b(1:n) == [(sum_over(p, i), i = before, before + n - 1)]))
        deallocate (a, b)
        n = per(k)
        allocate (x(max(n * p, 1)), y(max(n * p, 1)))
        x = [(real(val(r, i)) * 0.25, i = 0, size(x) - 1)]
        y = -3
        if (ip == 1) then
          y = x
          call MPI_Reduce_scatter_block(MPI_IN_PLACE, y, n, MPI_REAL, MPI_SUM, comm, ierr)
        else
          call MPI_Reduce_scatter_block(x, y, n, MPI_REAL, MPI_SUM, comm, ierr)
        end if
        write (what, '(a,i0,a)') 'reduce_scatter_block sum real n=', n, merge(' in-place', '         ', ip == 1)
        call report(label(trim(what), lbl), transfer(y(1:n), [0_int8]), &
                    all(y(1:n) == [(real(sum_over(p, i)) * 0.25, i = r * n, r * n + n - 1)]))
        deallocate (x, y)
      end do
    end do
  end subroutine

  ! The data-movement collectives on Fortran types.
  subroutine t_moves(comm, lbl)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: lbl
    integer :: r, p, root, i, q, ierr
    integer :: iv(40)
    character(len=37) :: text
    logical :: lv(9)
    double complex :: zv(6)
    real, allocatable :: ra(:), rall(:)
    integer(int64), allocatable :: la(:), lall(:)
    double precision, allocatable :: da(:), dall(:)
    integer(int16), allocatable :: sa(:), sall(:)
    integer, allocatable :: rcounts(:), displs(:)
    character(len=64) :: what
    logical :: ok
    call whoami(comm, r, p)
    do root = 0, p - 1
      iv = -1; text = ''; lv = .false.; zv = 0
      if (r == root) then
        iv = [(val(root, i), i = 1, 40)]
        text = 'The quick brown fox jumps over a dog.'
        lv = [(mod(i + root, 3) == 0, i = 1, 9)]
        zv = [(cmplx(i * 0.5d0, -i - root, kind(1d0)), i = 1, 6)]
      end if
      call MPI_Bcast(iv, 40, MPI_INTEGER, root, comm, ierr)
      call MPI_Bcast(text, len(text), MPI_CHARACTER, root, comm, ierr)
      call MPI_Bcast(lv, 9, MPI_LOGICAL, root, comm, ierr)
      call MPI_Bcast(zv, 6, MPI_DOUBLE_COMPLEX, root, comm, ierr)
      ok = all(iv == [(val(root, i), i = 1, 40)]) .and. text == 'The quick brown fox jumps over a dog.' .and. &
           all(lv .eqv. [(mod(i + root, 3) == 0, i = 1, 9)]) .and. &
           all(zv == [(cmplx(i * 0.5d0, -i - root, kind(1d0)), i = 1, 6)])
      write (what, '(a,i0)') 'bcast integer character logical double complex root=', root
      call report(label(trim(what), lbl), [transfer(iv, [0_int8]), transfer(text, [0_int8]), &
                  transfer(lv, [0_int8]), transfer(zv, [0_int8])], ok)
      ! gather and scatter of reals, 5 per rank, in place at the root on odd roots
      allocate (ra(5), rall(5 * p))
      ra = [(real(val(r, i)), i = 1, 5)]
      rall = -1
      if (r == root .and. mod(root, 2) == 1) then
        rall(5 * r + 1:5 * r + 5) = ra
        call MPI_Gather(MPI_IN_PLACE, 5, MPI_REAL, rall, 5, MPI_REAL, root, comm, ierr)
      else
        call MPI_Gather(ra, 5, MPI_REAL, rall, 5, MPI_REAL, root, comm, ierr)
      end if
      ok = .true.
      if (r == root) ok = all(rall == [((real(val(q, i)), i = 1, 5), q = 0, p - 1)])
      if (r /= root) rall = 0
      write (what, '(a,i0)') 'gather real root=', root
      call report(label(trim(what), lbl), transfer(rall, [0_int8]), ok)
      if (r == root) rall = [((real(val(q, i) + 1), i = 1, 5), q = 0, p - 1)]
      ra = -1
      call MPI_Scatter(rall, 5, MPI_REAL, ra, 5, MPI_REAL, root, comm, ierr)
      write (what, '(a,i0)') 'scatter real root=', root
      call report(label(trim(what), lbl), transfer(ra, [0_int8]), all(ra == [(real(val(r, i) + 1), i = 1, 5)]))
      deallocate (ra, rall)
    end do
    ! allgather of integer8, allgatherv of double precision (displacements reversed), alltoall of integer2
    allocate (la(3), lall(3 * p))
    la = [(int(val(r, i), int64) * 2_int64**33, i = 1, 3)]
    call MPI_Allgather(la, 3, MPI_INTEGER8, lall, 3, MPI_INTEGER8, comm, ierr)
    call report(label('allgather integer8', lbl), transfer(lall, [0_int8]), &
                all(lall == [((int(val(q, i), int64) * 2_int64**33, i = 1, 3), q = 0, p - 1)]))
    allocate (rcounts(p), displs(p))
    rcounts = [(q + 1, q = 0, p - 1)]
    displs(p) = 0
    do q = p - 1, 1, -1
      displs(q) = displs(q + 1) + rcounts(q + 1)
    end do
    allocate (da(r + 1), dall(sum(rcounts)))
    da = [(real(val(r, i), kind(1d0)) / 4, i = 1, r + 1)]
    dall = -1
    call MPI_Allgatherv(da, r + 1, MPI_DOUBLE_PRECISION, dall, rcounts, displs, MPI_DOUBLE_PRECISION, comm, ierr)
    ok = .true.
    do q = 0, p - 1
      ok = ok .and. all(dall(displs(q + 1) + 1:displs(q + 1) + q + 1) == [(real(val(q, i), kind(1d0)) / 4, i = 1, q + 1)])
    end do
    call report(label('allgatherv double precision reversed', lbl), transfer(dall, [0_int8]), ok)
    allocate (sa(2 * p), sall(2 * p))
    sa = [(int(r * 100 + i, int16), i = 0, 2 * p - 1)]
    call MPI_Alltoall(sa, 2, MPI_INTEGER2, sall, 2, MPI_INTEGER2, comm, ierr)
    ok = all(sall == [((int(q * 100 + 2 * r + i, int16), i = 0, 1), q = 0, p - 1)])
    call report(label('alltoall integer2', lbl), transfer(sall, [0_int8]), ok)
  end subroutine

  subroutine t_barrier(comm, lbl)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: lbl
    integer :: i, ierr
    do i = 1, 3
      call MPI_Barrier(comm, ierr)
    end do
    call report(label('barrier x3', lbl), [0_int8], .true.)
  end subroutine
end module cases_m

! Fortran user ops: an integer sum (commutative), and 2x2 matrix products
! modulo a prime on a derived type of 4 integers (associative, not commutative).
subroutine isum(invec, inoutvec, n, dtype)
  implicit none
  integer :: n, dtype, i
  integer :: invec(n), inoutvec(n)
  if (dtype == 0) continue ! MPI passes the datatype; this op knows it
  do i = 1, n
    inoutvec(i) = invec(i) + inoutvec(i)
  end do
end subroutine

subroutine matmod(invec, inoutvec, n, dtype)
  implicit none
  integer :: n, dtype, k
  integer :: invec(4, n), inoutvec(4, n), c(4)
  if (dtype == 0) continue ! MPI passes the datatype; this op knows it
  do k = 1, n ! inout = in * inout, (a b; c d) stored a, b, c, d
    c(1) = mod(invec(1, k) * inoutvec(1, k) + invec(2, k) * inoutvec(3, k), 9973)
    c(2) = mod(invec(1, k) * inoutvec(2, k) + invec(2, k) * inoutvec(4, k), 9973)
    c(3) = mod(invec(3, k) * inoutvec(1, k) + invec(4, k) * inoutvec(3, k), 9973)
    c(4) = mod(invec(3, k) * inoutvec(2, k) + invec(4, k) * inoutvec(4, k), 9973)
    inoutvec(:, k) = c
  end do
end subroutine

module user_m
  use cases_m
  implicit none
  external :: isum, matmod
contains
  subroutine t_user_ops(comm, lbl)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: lbl
    integer, parameter :: n = 30
    integer :: r, p, i, q, ierr, mat, sop, mop, root, dummy
    integer :: a(n), b(n), m(4, n), mo(4, n), want(4), x(4)
    character(len=64) :: what
    logical :: ok
    call whoami(comm, r, p)
    call MPI_Op_create(isum, .true., sop, ierr)
    call MPI_Op_create(matmod, .false., mop, ierr)
    call MPI_Type_contiguous(4, MPI_INTEGER, mat, ierr)
    call MPI_Type_commit(mat, ierr)
    a = [(val(r, i), i = 1, n)]
    call MPI_Allreduce(a, b, n, MPI_INTEGER, sop, comm, ierr)
    call report(label('allreduce user sum integer', lbl), transfer(b, [0_int8]), &
                all(b == [(sum_over(p, i), i = 1, n)]))
    m = reshape([((mod(r * 7 + i * 3 + dummy * 5 + mod(r * dummy, 3), 5), dummy = 0, 3), i = 1, n)], [4, n])
    call MPI_Allreduce(m, mo, n, mat, mop, comm, ierr)
    ok = .true.
    do i = 1, n
      want = [(mod((p - 1) * 7 + i * 3 + dummy * 5 + mod((p - 1) * dummy, 3), 5), dummy = 0, 3)]
      do q = p - 2, 0, -1 ! x_0 * x_1 * ... * x_(p-1)
        x = [(mod(q * 7 + i * 3 + dummy * 5 + mod(q * dummy, 3), 5), dummy = 0, 3)]
        call matmod(x, want, 1, mat)
      end do
      ok = ok .and. all(mo(:, i) == want)
    end do
    call report(label('allreduce user matmod (not commutative)', lbl), transfer(mo, [0_int8]), ok)
    do root = 0, p - 1
      mo = 0
      call MPI_Reduce(m, mo, n, mat, mop, root, comm, ierr)
      ok = .true.
      do i = 1, n
        want = [(mod((p - 1) * 7 + i * 3 + dummy * 5 + mod((p - 1) * dummy, 3), 5), dummy = 0, 3)]
        do q = p - 2, 0, -1
          x = [(mod(q * 7 + i * 3 + dummy * 5 + mod(q * dummy, 3), 5), dummy = 0, 3)]
          call matmod(x, want, 1, mat)
        end do
        ok = ok .and. (r /= root .or. all(mo(:, i) == want))
      end do
      write (what, '(a,i0)') 'reduce user matmod root=', root
      call report(label(trim(what), lbl), transfer(mo, [0_int8]), ok)
    end do
    call MPI_Type_free(mat, ierr)
    call MPI_Op_free(sop, ierr)
    call MPI_Op_free(mop, ierr)
  end subroutine
end module user_m

program colls
  use user_m
  implicit none
  integer :: ierr, w, p, dup, split, wrong
  character(len=16) :: arg
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, w, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, p, ierr)
  arg = ''
  if (command_argument_count() > 0) call get_command_argument(1, arg)
  call run_all(MPI_COMM_WORLD, 'world')
  if (arg /= 'world') then
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call run_all(dup, 'dup')
    call MPI_Comm_free(dup, ierr)
    call MPI_Comm_split(MPI_COMM_WORLD, mod(w, 2), -w, split, ierr)
    call t_allreduce(split, 'split')
    call t_types(split, 'split')
    call t_reduce(split, 'split')
    call t_user_ops(split, 'split')
    call MPI_Comm_free(split, ierr)
  end if
  wrong = print_logs()
  if (w == 0) print '(a,a,i0,a)', merge('FAILED', 'done  ', wrong > 0), ': ', wrong, ' wrong'
  call MPI_Finalize(ierr)
  if (wrong > 0) stop 1
contains
  subroutine run_all(comm, lbl)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: lbl
    call t_allreduce(comm, lbl)
    call t_types(comm, lbl)
    call t_passthrough(comm, lbl)
    call t_reduce(comm, lbl)
    call t_reduce_scatter(comm, lbl)
    call t_moves(comm, lbl)
    call t_barrier(comm, lbl)
    call t_user_ops(comm, lbl)
  end subroutine
end program colls
