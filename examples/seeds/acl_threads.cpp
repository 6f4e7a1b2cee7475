// SPDX-License-Identifier: MIT
//
// AscendCL stream management, "several threads, several streams"
// (多线程多Stream), from the AscendCL application development guide,
// ported to libaccel. The sample's lines are kept as published, with its
// typos fixed (the full-width semicolons; stream1 and stream2, copied
// into the threads before any value was stored, start as nullptr); the
// only other change to them is the include line, "acl/acl.h" ->
// <libaccel/acl_compat.h>. The guide elides the surrounding program and the
// threads' work ("// ...."): those parts are filled in here, marked
// "filled in": each thread moves a buffer through the device on its own
// stream, in its own context, and checks it.
#include <libaccel/acl_compat.h>

#include <atomic>
#include <stdio.h>
#include <string.h>
#include <thread>

// filled in: what each thread's work found
static std::atomic<int> failures(0);

// filled in: a round trip on the thread's stream
static void roundTrip(aclrtStream stream)
{
	const size_t n = 256 << 10;
	void *host = nullptr, *back = nullptr, *dev = nullptr;

	if (aclrtMallocHost(&host, n) != ACL_SUCCESS ||
	    aclrtMallocHost(&back, n) != ACL_SUCCESS ||
	    aclrtMalloc(&dev, n, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
		failures++;
		return;
	}
	for (size_t i = 0; i < n; i++)
		((unsigned char *)host)[i] = (unsigned char)(i ^ (uintptr_t)stream);
	if (aclrtMemcpyAsync(dev, n, host, n, ACL_MEMCPY_HOST_TO_DEVICE, stream) != ACL_SUCCESS ||
	    aclrtMemcpyAsync(back, n, dev, n, ACL_MEMCPY_DEVICE_TO_HOST, stream) != ACL_SUCCESS ||
	    aclrtSynchronizeStream(stream) != ACL_SUCCESS ||
	    memcmp(host, back, n) != 0)
		failures++;
	aclrtFree(dev);
	aclrtFreeHost(host);
	aclrtFreeHost(back);
}

// ......
void runThread(aclrtStream stream) {
    int32_t deviceId =0 ;
    aclrtContext context;

    // 如果只创建了一个Context，线程默认将这个Context作为线程当前的Context；
    // 如果是多个Context，则需要调用aclrtSetCurrentContext接口设置当前线程的Context
    aclrtCreateContext(&context, deviceId);
    aclrtCreateStream(&stream);

    // 调用触发任务的接口
    // ....
    roundTrip(stream);	// filled in

    // 释放资源
    aclrtDestroyStream(stream);
    aclrtDestroyContext(context);
   
}

int main()
{
	// filled in: initialization
	if (aclInit(nullptr) != ACL_SUCCESS) {
		printf("aclInit failed\n");
		return 1;
	}

aclrtStream stream1 = nullptr;
aclrtStream stream2 = nullptr;
// 创建2个线程，每个线程对应一个Stream
std::thread t1(runThread, stream1);
std::thread t2(runThread, stream2);
// 显式调用join函数确保结束线程
t1.join();
t2.join();

	// filled in
	aclFinalize();
	printf("%s\n", failures ? "round trip failed" : "ok");
	return failures != 0;
}
