! checks.f90 - what the Fortran test programs share (test/fortran,
! test/repro): the hash of their output, the generator of wide-range
! values that test/repro/repro.h computes in C, their argument.
module checks_m
  use iso_fortran_env, only: int8, int64
  implicit none
contains
  ! FNV-1a of the bytes.
  function fnv(b) result(h)
    integer(int8), intent(in) :: b(:)
    integer(int64) :: h
    integer :: k
    h = 2166136261_int64
    do k = 1, size(b)
      h = iand(ieor(h, iand(int(b(k), int64), 255_int64)) * 16777619_int64, 4294967295_int64)
    end do
  end function

  ! Park-Miller, in 64-bit integers (no overflow: h < 2^31).
  function lcg(h) result(v)
    integer(int64), intent(in) :: h
    integer(int64) :: v
    v = mod(h * 48271_int64, 2147483647_int64)
  end function

  ! The value of the four draws after seed h: +-m 2^(e - 52), m a 53-bit
  ! mantissa cut to its top `bits` bits, e within +-w/2. Exact in double.
  function draw(seed, w, bits) result(v)
    integer(int64), intent(in) :: seed, w
    integer, intent(in) :: bits
    double precision :: v
    integer(int64) :: h, m, e
    h = lcg(seed)
    m = mod(h, 33554432_int64)
    h = lcg(h)
    m = m * 134217728_int64 + mod(h, 134217728_int64) + 4503599627370496_int64
    m = shiftl(shiftr(m, 53 - bits), 53 - bits)
    h = lcg(h)
    e = mod(h, w + 1) - w / 2
    h = lcg(h)
    v = merge(-1d0, 1d0, mod(h, 2_int64) == 1) * scale(real(m, kind(1d0)), int(e) - 52)
  end function

  ! The first command-line argument as an integer, or dflt without one.
  integer function arg_int(dflt)
    integer, intent(in) :: dflt
    character(len=16) :: arg
    arg_int = dflt
    if (command_argument_count() == 0) return
    call get_command_argument(1, arg)
    read (arg, *) arg_int
  end function
end module checks_m
