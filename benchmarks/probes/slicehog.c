// A probe for BENCHMARKS.md ("Hits' rows from the scratch files"):
// `slicehog POLICY(idle|batch|other) NICE SLICE_NS SECONDS`: one compute loop at that policy,
// nice value and EEVDF slice request (sched_setattr; 0 keeps the default slice).
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>
#include <time.h>
#include <sys/syscall.h>
struct attr { uint32_t size, policy; uint64_t flags; int32_t nice; uint32_t prio; uint64_t runtime, deadline, period; };
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int c,char**v){
  struct attr a; memset(&a,0,sizeof a); a.size=sizeof a;
  a.policy = !strcmp(v[1],"idle")?5:!strcmp(v[1],"batch")?3:0;
  a.nice=atoi(v[2]); a.runtime=strtoull(v[3],0,10);
  if(syscall(SYS_sched_setattr,0,&a,0)) { perror("sched_setattr"); return 1; }
  char p[64]; snprintf(p,64,"/proc/self/sched"); FILE*f=fopen(p,"r"); char line[256];
  while(fgets(line,256,f)) if(strstr(line,"slice")||strstr(line,"policy")||strstr(line,"prio")) fputs(line,stderr);
  double secs=atof(v[4]), t0=now(); volatile unsigned x=1;
  while(now()-t0<secs) for(int k=0;k<100000;k++) x=x*1664525u+1013904223u;
  return 0;}
