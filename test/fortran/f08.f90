! f08.f90 - an unmodified Fortran 2008 MPI program (the mpi_f08 module) for
! the redcoll drop-in (test/fortran/run.sh).
!
! mpi_f08 reaches MPI's C entry points by other wrappers than the mpi
! module does (descriptors, TYPE(MPI_Datatype) handles, its own user-op
! callback interface); this program runs the reductions and data movement
! the drop-in serves through them, with exact data, and prints one line per
! case (name, ok or WRONG, a hash of rank 0's result) from rank 0.
module f08_ops
  use mpi_f08
  implicit none
contains
  ! a commutative user sum on INTEGER
  subroutine isum(invec, inoutvec, len, datatype)
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    if (datatype /= MPI_INTEGER) return
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    b = a + b
  end subroutine
end module f08_ops

program f08
  use mpi_f08
  use f08_ops
  use checks_m
  use iso_fortran_env, only: int8
  implicit none
  integer, parameter :: n = 1000
  integer :: r, p, i, q, wrong
  double precision :: x(n), y(n)
  integer :: ia(n), ib(n)
  logical :: la(7), lb(7)
  double precision :: pd(2, 7), pdo(2, 7)
  type(MPI_Op) :: uop
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, r)
  call MPI_Comm_size(MPI_COMM_WORLD, p)
  wrong = 0
  x = [(dble(mod(r * 37 + i, 101)) * 0.25d0, i = 1, n)]
  call MPI_Allreduce(x, y, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  call say('allreduce sum double precision', transfer(y, [0_int8]), &
           all(y == [(sum([(dble(mod(q * 37 + i, 101)) * 0.25d0, q = 0, p - 1)]), i = 1, n)]))
  ia = [(mod(r * 7 + i, 13) - 6, i = 1, n)]
  call MPI_Allreduce(MPI_IN_PLACE, ia, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call say('allreduce sum integer in-place', transfer(ia, [0_int8]), &
           all(ia == [(sum([(mod(q * 7 + i, 13) - 6, q = 0, p - 1)]), i = 1, n)]))
  y = -1
  call MPI_Reduce(x, y, n, MPI_REAL8, MPI_SUM, p - 1, MPI_COMM_WORLD)
  if (r == p - 1) call MPI_Send(y, n, MPI_REAL8, 0, 9, MPI_COMM_WORLD)
  if (r == 0) call MPI_Recv(y, n, MPI_REAL8, p - 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call say('reduce sum real8 to the last rank', transfer(y, [0_int8]), r /= 0 .or. &
           all(y == [(sum([(dble(mod(q * 37 + i, 101)) * 0.25d0, q = 0, p - 1)]), i = 1, n)]))
  la = [(mod(r + i, 3) == 0, i = 1, 7)]
  call MPI_Allreduce(la, lb, 7, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD)
  call say('allreduce lor logical', transfer(lb, [0_int8]), &
           all(lb .eqv. [(any([(mod(q + i, 3) == 0, q = 0, p - 1)]), i = 1, 7)]))
  pd(1, :) = [(dble(mod(r * 5 + i, 3)), i = 1, 7)]
  pd(2, :) = dble(r)
  call MPI_Allreduce(pd, pdo, 7, MPI_2DOUBLE_PRECISION, MPI_MINLOC, MPI_COMM_WORLD)
  call say('allreduce minloc 2double precision', transfer(pdo, [0_int8]), &
           all(pdo(1, :) == [(minval([(dble(mod(q * 5 + i, 3)), q = 0, p - 1)]), i = 1, 7)]) .and. &
           all(pdo(2, :) == [(dble(minloc([(mod(q * 5 + i, 3), q = 0, p - 1)], 1) - 1), i = 1, 7)]))
  call MPI_Op_create(isum, .true., uop)
  ia = [(r * 1000 + i, i = 1, n)]
  call MPI_Allreduce(ia, ib, n, MPI_INTEGER, uop, MPI_COMM_WORLD)
  call say('allreduce user sum integer', transfer(ib, [0_int8]), &
           all(ib == [(1000 * p * (p - 1) / 2 + p * i, i = 1, n)]))
  call MPI_Op_free(uop)
  ia = -1
  if (r == 0) ia = [(i * 3, i = 1, n)]
  call MPI_Bcast(ia, n, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call say('bcast integer', transfer(ia, [0_int8]), all(ia == [(i * 3, i = 1, n)]))
  x = -1
  call MPI_Reduce_scatter_block([(dble(r + i), i = 1, 3 * p)], x, 3, MPI_DOUBLE_PRECISION, MPI_SUM, &
                                MPI_COMM_WORLD)
  call say('reduce_scatter_block sum double precision', transfer(x(1:3), [0_int8]), &
           all(x(1:3) == [(dble(p * (p - 1) / 2 + p * i), i = 3 * r + 1, 3 * r + 3)]))
  if (r == 0) print '(a,a,i0,a)', merge('FAILED', 'done  ', wrong > 0), ': ', wrong, ' wrong on rank 0'
  call MPI_Finalize()
  if (wrong > 0) stop 1
contains
  subroutine say(name, bytes, ok)
    character(len=*), intent(in) :: name
    integer(int8), intent(in) :: bytes(:)
    logical, intent(in) :: ok
    logical :: all_ok
    call MPI_Allreduce(ok, all_ok, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD)
    if (.not. all_ok) wrong = wrong + 1
    if (r == 0) print '(a,1x,a,1x,z8.8)', name // repeat(' ', 48 - len(name)), merge('ok   ', 'WRONG', all_ok), fnv(bytes)
  end subroutine
end program f08
