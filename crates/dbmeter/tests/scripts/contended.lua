-- A workload whose throughput peaks and falls with its users: each
-- event's service time grows with the square of the events in flight
-- (10 ms + 0.625 ms x n^2, n counted in the file active.bin under flock),
-- so the users serve n / (10 ms + 0.625 ms n^2) per second: 94/s at 1,
-- 160/s at 2, 200/s at 4, 160/s at 8, 94/s at 16. Used by the e2e test
-- stages::users_search_stops_after_the_peak and by bench/capacity.sh.
local ffi = require("ffi")
ffi.cdef[[
int usleep(unsigned int);
int open(const char *path, int flags, int mode);
int flock(int fd, int op);
long pread(int fd, void *buf, unsigned long n, long off);
long pwrite(int fd, const void *buf, unsigned long n, long off);
]]
local fd
local n = ffi.new("int64_t[1]")
local function add(d)
  ffi.C.flock(fd, 2)
  n[0] = 0
  ffi.C.pread(fd, n, 8, 0)
  n[0] = n[0] + d
  ffi.C.pwrite(fd, n, 8, 0)
  ffi.C.flock(fd, 8)
  return tonumber(n[0])
end
function thread_init()
  fd = ffi.C.open("active.bin", 66, 420)
  assert(fd >= 0, "cannot open active.bin")
end
function event()
  local k = add(1)
  ffi.C.usleep(10000 + 625 * k * k)
  add(-1)
end
