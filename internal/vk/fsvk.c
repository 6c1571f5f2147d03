#include "fsvk.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef fsPFN (*fsPFN_GetInstanceProcAddr)(fsVkInstance, const char *);
typedef fsPFN (*fsPFN_GetDeviceProcAddr)(fsVkDevice, const char *);

typedef struct {
	int32_t sType;
	const void *pNext;
	uint32_t flags;
	const char *pMessageIdName;
	int32_t messageIdNumber;
	const char *pMessage;
	// further members unused
} fsDebugUtilsMessengerCallbackData;

typedef uint32_t (*fsPFN_DebugCallback)(uint32_t severity, uint32_t types,
	const fsDebugUtilsMessengerCallbackData *data, void *user);

typedef struct {
	int32_t sType; // 1000128004
	const void *pNext;
	uint32_t flags;
	uint32_t messageSeverity;
	uint32_t messageType;
	fsPFN_DebugCallback pfnUserCallback;
	void *pUserData;
} fsDebugUtilsMessengerCreateInfo;

static void *loader_lib;
static fsPFN_GetInstanceProcAddr gipa;

int fs_open_loader(const char *name, char *err, size_t errlen) {
	if (gipa != NULL) {
		return 0;
	}
	void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		const char *e = dlerror();
		snprintf(err, errlen, "%s", e ? e : "dlopen failed");
		return -1;
	}
	void *sym = dlsym(lib, "vkGetInstanceProcAddr");
	if (sym == NULL) {
		snprintf(err, errlen, "%s has no vkGetInstanceProcAddr", name);
		dlclose(lib);
		return -1;
	}
	loader_lib = lib;
	gipa = (fsPFN_GetInstanceProcAddr)sym;
	return 0;
}

void *fs_get_instance_proc_addr_ptr(void) { return (void *)gipa; }

fsPFN fs_instance_proc(fsVkInstance instance, const char *name) {
	if (gipa == NULL) {
		return NULL;
	}
	return gipa(instance, name);
}

typedef void (*fsPFN_DestroyDevice)(fsVkDevice, const void *);
void fs_destroy_device_via(fsVkInstance instance, fsVkDevice device) {
	fsPFN_GetDeviceProcAddr gdpa = (fsPFN_GetDeviceProcAddr)fs_instance_proc(instance, "vkGetDeviceProcAddr");
	fsPFN destroy = gdpa ? gdpa(device, "vkDestroyDevice") : NULL;
	if (destroy)
		((fsPFN_DestroyDevice)destroy)(device, NULL);
}

typedef fsVkResult (*fsPFN_GetCalibrateableTimeDomains)(fsVkPhysicalDevice, uint32_t *, int32_t *);
fsVkResult fs_get_calibrateable_time_domains(fsPFN fn, fsVkPhysicalDevice pd, uint32_t *count, int32_t *domains) {
	return ((fsPFN_GetCalibrateableTimeDomains)fn)(pd, count, domains);
}

typedef fsVkResult (*fsPFN_GetCalibratedTimestamps)(fsVkDevice, uint32_t, const fsCalibratedTimestampInfo *,
	uint64_t *, uint64_t *);
fsCalibrated fs_calibrated(fsPFN fn, fsVkDevice dev, uint32_t count, int32_t d0, int32_t d1, int32_t d2, int32_t d3) {
	fsCalibratedTimestampInfo infos[4];
	int32_t doms[4] = {d0, d1, d2, d3};
	fsCalibrated out;
	memset(&out, 0, sizeof out);
	memset(infos, 0, sizeof infos);
	if (count > 4) {
		count = 4;
	}
	for (uint32_t i = 0; i < count; i++) {
		infos[i].sType = 1000184000;
		infos[i].timeDomain = doms[i];
	}
	out.rc = ((fsPFN_GetCalibratedTimestamps)fn)(dev, count, infos, out.ts, &out.maxDeviation);
	return out;
}

typedef void (*fsPFN_ResetQueryPool)(fsVkDevice, fsVkQueryPool, uint32_t, uint32_t);
void fs_reset_query_pool(fsPFN fn, fsVkDevice dev, fsVkQueryPool pool, uint32_t first, uint32_t count) {
	((fsPFN_ResetQueryPool)fn)(dev, pool, first, count);
}

typedef void (*fsPFN_CmdBeginLabel)(fsVkCommandBuffer, const fsDebugUtilsLabel *);
typedef void (*fsPFN_CmdWriteTimestamp)(fsVkCommandBuffer, uint32_t, fsVkQueryPool, uint32_t);

void fs_cmd_write_timestamp(fsPFN fn, uintptr_t cmd, uint32_t stage, uint64_t pool, uint32_t query) {
	((fsPFN_CmdWriteTimestamp)fn)((fsVkCommandBuffer)cmd, stage, pool, query);
}

void fs_cmd_begin_label(fsPFN fn, fsVkCommandBuffer cmd, const char *name) {
	fsDebugUtilsLabel l;
	memset(&l, 0, sizeof l);
	l.sType = 1000128002;
	l.pLabelName = name;
	((fsPFN_CmdBeginLabel)fn)(cmd, &l);
}

typedef void (*fsPFN_CmdEndLabel)(fsVkCommandBuffer);
void fs_cmd_end_label(fsPFN fn, fsVkCommandBuffer cmd) { ((fsPFN_CmdEndLabel)fn)(cmd); }

typedef void (*fsPFN_GetFeatures2)(fsVkPhysicalDevice, fsPhysicalDeviceFeatures2 *);
int fs_host_query_reset_supported(fsPFN fn, fsVkPhysicalDevice pd) {
	fsPhysicalDeviceFeatures2 f;
	fsHostQueryResetFeatures hqr;
	memset(&f, 0, sizeof f);
	memset(&hqr, 0, sizeof hqr);
	f.sType = 1000059000;
	hqr.sType = 1000261000;
	f.pNext = &hqr;
	((fsPFN_GetFeatures2)fn)(pd, &f);
	return hqr.hostQueryReset != 0;
}

typedef struct {
	int32_t sType; // 1000196000 VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES
	void *pNext;
	uint32_t driverID;
	char driverName[256];
	char driverInfo[256];
	uint8_t conformance[4];
} fsPhysicalDeviceDriverProperties;

typedef struct {
	int32_t sType; // 1000059001 VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2
	void *pNext;
	uint8_t properties[1024]; // VkPhysicalDeviceProperties (824 bytes on x86-64), unused here
} fsPhysicalDeviceProperties2;

typedef void (*fsPFN_GetProperties2)(fsVkPhysicalDevice, fsPhysicalDeviceProperties2 *);

// properties2 calls vkGetPhysicalDeviceProperties2 (fn) with next, a
// zeroed structure of type sType, chained.
static void properties2(fsPFN fn, fsVkPhysicalDevice pd, void *next, int32_t sType) {
	fsPhysicalDeviceProperties2 p2;
	memset(&p2, 0, sizeof p2);
	p2.sType = 1000059001;
	p2.pNext = next;
	*(int32_t *)next = sType;
	((fsPFN_GetProperties2)fn)(pd, &p2);
}

int fs_get_driver_info(fsPFN fn, fsVkPhysicalDevice pd, fsDriverInfo *out) {
	fsPhysicalDeviceDriverProperties drv;
	memset(&drv, 0, sizeof drv);
	properties2(fn, pd, &drv, 1000196000);
	out->driverID = drv.driverID;
	memcpy(out->driverName, drv.driverName, sizeof out->driverName);
	memcpy(out->driverInfo, drv.driverInfo, sizeof out->driverInfo);
	out->driverName[255] = 0;
	out->driverInfo[255] = 0;
	return 0;
}

typedef struct {
	int32_t sType; // 1000071004 VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES
	void *pNext;
	uint8_t deviceUUID[16];
	uint8_t driverUUID[16];
	uint8_t deviceLUID[8];
	uint32_t deviceNodeMask;
	uint32_t deviceLUIDValid;
} fsPhysicalDeviceIDProperties;

void fs_get_device_uuid(fsPFN fn, fsVkPhysicalDevice pd, uint8_t *out) {
	fsPhysicalDeviceIDProperties id;
	memset(&id, 0, sizeof id);
	properties2(fn, pd, &id, 1000071004);
	memcpy(out, id.deviceUUID, 16);
}

typedef struct {
	int32_t sType; // VK_STRUCTURE_TYPE_MEMORY_BARRIER 46
	const void *pNext;
	uint32_t srcAccessMask;
	uint32_t dstAccessMask;
} fsMemoryBarrier;

typedef void (*fsPFN_CmdPipelineBarrier)(fsVkCommandBuffer, uint32_t, uint32_t, uint32_t, uint32_t,
	const fsMemoryBarrier *, uint32_t, const void *, uint32_t, const void *);
typedef void (*fsPFN_CmdCopyQueryPoolResults)(fsVkCommandBuffer, fsVkQueryPool, uint32_t, uint32_t, fsVkBuffer,
	uint64_t, uint64_t, uint32_t);

void fs_cmd_copy_queries(fsPFN barrier, fsPFN copy, fsVkCommandBuffer cmd, fsVkQueryPool pool,
	uint32_t first, uint32_t count, fsVkBuffer buf, uint64_t offset, uint64_t stride, uint32_t flags, int pre, int post) {
	fsMemoryBarrier mb;
	memset(&mb, 0, sizeof mb);
	mb.sType = 46;
	if (pre) {
		// ALL_COMMANDS -> TRANSFER; timestamp and availability writes -> transfer reads.
		mb.srcAccessMask = 0x00010000; // MEMORY_WRITE
		mb.dstAccessMask = 0x00000800 | 0x00008000; // TRANSFER_READ | MEMORY_READ
		((fsPFN_CmdPipelineBarrier)barrier)(cmd, 0x00010000, 0x00001000, 0, 1, &mb, 0, NULL, 0, NULL);
	}
	((fsPFN_CmdCopyQueryPoolResults)copy)(cmd, pool, first, count, buf, offset, stride, flags);
	if (post) {
		// TRANSFER -> HOST: the copy's writes -> host reads.
		mb.srcAccessMask = 0x00001000; // TRANSFER_WRITE
		mb.dstAccessMask = 0x00002000; // HOST_READ
		((fsPFN_CmdPipelineBarrier)barrier)(cmd, 0x00001000, 0x00004000, 0, 1, &mb, 0, NULL, 0, NULL);
	}
}

typedef struct {
	int32_t sType; // 0 VK_STRUCTURE_TYPE_APPLICATION_INFO
	const void *pNext;
	const char *pApplicationName;
	uint32_t applicationVersion;
	const char *pEngineName;
	uint32_t engineVersion;
	uint32_t apiVersion;
} fsApplicationInfo;

typedef struct {
	int32_t sType; // 1 VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO
	const void *pNext;
	uint32_t flags;
	const fsApplicationInfo *pApplicationInfo;
	uint32_t enabledLayerCount;
	const char *const *ppEnabledLayerNames;
	uint32_t enabledExtensionCount;
	const char *const *ppEnabledExtensionNames;
} fsInstanceCreateInfo;

typedef fsVkResult (*fsPFN_CreateInstance)(const fsInstanceCreateInfo *, const void *, fsVkInstance *);

typedef struct {
	int32_t sType; // 1000247000 VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT
	const void *pNext;
	uint32_t enabledValidationFeatureCount;
	const int32_t *pEnabledValidationFeatures;
	uint32_t disabledValidationFeatureCount;
	const int32_t *pDisabledValidationFeatures;
} fsValidationFeatures;

static void fill_messenger_info(void *ci); // below, with the callback

fsVkResult fs_create_instance(const char *app, uint32_t api, const char *const *layers, uint32_t nl,
	const char *const *exts, uint32_t ne, const int32_t *enables, uint32_t nen, int messenger, fsVkInstance *out) {
	fsPFN_CreateInstance create = (fsPFN_CreateInstance)fs_instance_proc(NULL, "vkCreateInstance");
	if (create == NULL) {
		return -9; // VK_ERROR_INCOMPATIBLE_DRIVER
	}
	fsApplicationInfo ai;
	memset(&ai, 0, sizeof ai);
	ai.pApplicationName = app;
	ai.pEngineName = "framescope";
	ai.apiVersion = api;
	fsInstanceCreateInfo ci;
	memset(&ci, 0, sizeof ci);
	ci.sType = 1;
	ci.pApplicationInfo = &ai;
	ci.enabledLayerCount = nl;
	ci.ppEnabledLayerNames = layers;
	ci.enabledExtensionCount = ne;
	ci.ppEnabledExtensionNames = exts;
	// A messenger for vkCreateInstance and vkDestroyInstance themselves
	// (VK_EXT_debug_utils: one chained here covers those two calls).
	fsDebugUtilsMessengerCreateInfo mi;
	fsValidationFeatures vf;
	memset(&vf, 0, sizeof vf);
	if (messenger) {
		fill_messenger_info(&mi);
		ci.pNext = &mi;
	}
	if (nen > 0) {
		vf.sType = 1000247000;
		vf.pNext = ci.pNext;
		vf.enabledValidationFeatureCount = nen;
		vf.pEnabledValidationFeatures = enables;
		ci.pNext = &vf;
	}
	return create(&ci, NULL, out);
}

typedef struct {
	int32_t sType; // 2 VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO
	const void *pNext;
	uint32_t flags;
	uint32_t queueFamilyIndex;
	uint32_t queueCount;
	const float *pQueuePriorities;
} fsDeviceQueueCreateInfo;

typedef struct {
	int32_t sType; // 3 VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO
	const void *pNext;
	uint32_t flags;
	uint32_t queueCreateInfoCount;
	const fsDeviceQueueCreateInfo *pQueueCreateInfos;
	uint32_t enabledLayerCount;
	const char *const *ppEnabledLayerNames;
	uint32_t enabledExtensionCount;
	const char *const *ppEnabledExtensionNames;
	const void *pEnabledFeatures;
} fsDeviceCreateInfo;

typedef fsVkResult (*fsPFN_CreateDevice)(fsVkPhysicalDevice, const fsDeviceCreateInfo *, const void *, fsVkDevice *);

fsVkResult fs_create_device(fsVkInstance inst, fsVkPhysicalDevice pd, const uint32_t *families, uint32_t nf,
	const char *const *exts, uint32_t ne, int hostQueryReset, int pipelineStats, fsVkDevice *out) {
	fsPFN_CreateDevice create = (fsPFN_CreateDevice)fs_instance_proc(inst, "vkCreateDevice");
	if (create == NULL || nf > 64) {
		return -3; // VK_ERROR_INITIALIZATION_FAILED
	}
	static const float prio = 1.0f;
	fsDeviceQueueCreateInfo q[64];
	memset(q, 0, sizeof q);
	for (uint32_t i = 0; i < nf; i++) {
		q[i].sType = 2;
		q[i].queueFamilyIndex = families[i];
		q[i].queueCount = 1;
		q[i].pQueuePriorities = &prio;
	}
	fsHostQueryResetFeatures hqr;
	memset(&hqr, 0, sizeof hqr);
	hqr.sType = 1000261000;
	hqr.hostQueryReset = 1;
	fsDeviceCreateInfo ci;
	memset(&ci, 0, sizeof ci);
	ci.sType = 3;
	ci.pNext = hostQueryReset ? &hqr : NULL;
	ci.queueCreateInfoCount = nf;
	ci.pQueueCreateInfos = q;
	ci.enabledExtensionCount = ne;
	ci.ppEnabledExtensionNames = exts;
	fsVkBool32 features[55]; // VkPhysicalDeviceFeatures
	memset(features, 0, sizeof features);
	features[24] = 1; // pipelineStatisticsQuery
	if (pipelineStats) {
		ci.pEnabledFeatures = features;
	}
	return create(pd, &ci, NULL, out);
}

typedef struct {
	int32_t sType; // 4 VK_STRUCTURE_TYPE_SUBMIT_INFO
	const void *pNext;
	uint32_t waitSemaphoreCount;
	const void *pWaitSemaphores;
	const void *pWaitDstStageMask;
	uint32_t commandBufferCount;
	void *const *pCommandBuffers;
	uint32_t signalSemaphoreCount;
	const void *pSignalSemaphores;
} fsSubmitInfo;

typedef fsVkResult (*fsPFN_QueueSubmit)(void *, uint32_t, const fsSubmitInfo *, uint64_t);

fsVkResult fs_queue_submit(fsPFN submit, void *queue, void *const *cmds, uint32_t n, uint64_t fence) {
	fsSubmitInfo si;
	memset(&si, 0, sizeof si);
	si.sType = 4;
	si.commandBufferCount = n;
	si.pCommandBuffers = cmds;
	return ((fsPFN_QueueSubmit)submit)(queue, 1, &si, fence);
}

typedef void (*fsPFN_CmdWaitEvents)(fsVkCommandBuffer, uint32_t, const uint64_t *, uint32_t, uint32_t,
	uint32_t, const void *, uint32_t, const void *, uint32_t, const void *);

void fs_cmd_wait_event(fsPFN wait, fsVkCommandBuffer cmd, uint64_t event) {
	// HOST -> ALL_COMMANDS
	((fsPFN_CmdWaitEvents)wait)(cmd, 1, &event, 0x00004000, 0x00010000, 0, NULL, 0, NULL, 0, NULL);
}

typedef struct {
	char name[256];
	uint32_t specVersion;
} fsExtensionProperties;

typedef struct {
	char name[256];
	uint32_t specVersion;
	uint32_t implementationVersion;
	char description[256];
} fsLayerProperties;

typedef fsVkResult (*fsPFN_EnumInstanceExts)(const char *, uint32_t *, fsExtensionProperties *);
typedef fsVkResult (*fsPFN_EnumInstanceLayers)(uint32_t *, fsLayerProperties *);
typedef fsVkResult (*fsPFN_EnumDeviceExts)(fsVkPhysicalDevice, const char *, uint32_t *, fsExtensionProperties *);
typedef void (*fsPFN_QueueFamilies)(fsVkPhysicalDevice, uint32_t *, void *);

static int copy_names(const char *src, size_t stride, uint32_t n, char *names, uint32_t cap) {
	if (n > cap) {
		n = cap;
	}
	for (uint32_t i = 0; i < n; i++) {
		memcpy(names + 256 * (size_t)i, src + stride * i, 256);
		names[256 * (size_t)i + 255] = 0;
	}
	return (int)n;
}

int fs_instance_extensions(const char *layer, char *names, uint32_t cap) {
	fsPFN_EnumInstanceExts fn = (fsPFN_EnumInstanceExts)fs_instance_proc(NULL, "vkEnumerateInstanceExtensionProperties");
	if (fn == NULL) {
		return -3;
	}
	uint32_t n = 0;
	fsVkResult r = fn(layer, &n, NULL);
	if (r < 0) {
		return r;
	}
	fsExtensionProperties *p = calloc(n ? n : 1, sizeof *p);
	if (p == NULL) {
		return -1;
	}
	r = fn(layer, &n, p);
	int out = r < 0 ? r : copy_names((const char *)p, sizeof *p, n, names, cap);
	free(p);
	return out;
}

int fs_instance_layers(char *names, uint32_t cap) {
	fsPFN_EnumInstanceLayers fn = (fsPFN_EnumInstanceLayers)fs_instance_proc(NULL, "vkEnumerateInstanceLayerProperties");
	if (fn == NULL) {
		return -3;
	}
	uint32_t n = 0;
	fsVkResult r = fn(&n, NULL);
	if (r < 0) {
		return r;
	}
	fsLayerProperties *p = calloc(n ? n : 1, sizeof *p);
	if (p == NULL) {
		return -1;
	}
	r = fn(&n, p);
	int out = r < 0 ? r : copy_names((const char *)p, sizeof *p, n, names, cap);
	free(p);
	return out;
}

int fs_device_extensions(fsPFN enumerate, fsVkPhysicalDevice pd, char *names, uint32_t cap) {
	fsPFN_EnumDeviceExts fn = (fsPFN_EnumDeviceExts)enumerate;
	if (fn == NULL) {
		return -3;
	}
	uint32_t n = 0;
	fsVkResult r = fn(pd, NULL, &n, NULL);
	if (r < 0) {
		return r;
	}
	fsExtensionProperties *p = calloc(n ? n : 1, sizeof *p);
	if (p == NULL) {
		return -1;
	}
	r = fn(pd, NULL, &n, p);
	int out = r < 0 ? r : copy_names((const char *)p, sizeof *p, n, names, cap);
	free(p);
	return out;
}

int fs_queue_families(fsPFN families, fsVkPhysicalDevice pd, fsFamily *out, uint32_t cap) {
	fsPFN_QueueFamilies fn = (fsPFN_QueueFamilies)families;
	if (fn == NULL) {
		return -3;
	}
	uint32_t n = 0;
	fn(pd, &n, NULL);
	uint32_t *p = calloc(n ? n : 1, 24); // VkQueueFamilyProperties: 6 uint32
	if (p == NULL) {
		return -1;
	}
	fn(pd, &n, p);
	if (n > cap) {
		n = cap;
	}
	for (uint32_t i = 0; i < n; i++) {
		out[i].flags = p[6 * i];
		out[i].count = p[6 * i + 1];
		out[i].validBits = p[6 * i + 2];
	}
	free(p);
	return (int)n;
}

// ---- Validation messages: counted by severity, kept in a small ring. ----

#define FS_RING 64
#define FS_MSG 1024
static pthread_mutex_t msg_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t msg_counts[4]; // verbose, info, warning, error
static char msg_ring[FS_RING][FS_MSG];
static uint64_t msg_head, msg_tail;

static uint32_t fs_debug_callback(uint32_t severity, uint32_t types,
	const fsDebugUtilsMessengerCallbackData *data, void *user) {
	(void)types;
	(void)user;
	int idx = 0;
	if (severity & 0x1000) idx = 3;      // ERROR
	else if (severity & 0x100) idx = 2;  // WARNING
	else if (severity & 0x10) idx = 1;   // INFO
	pthread_mutex_lock(&msg_mu);
	msg_counts[idx]++;
	if (idx >= 2) {
		if (msg_head - msg_tail == FS_RING) {
			msg_tail++;
		}
		snprintf(msg_ring[msg_head % FS_RING], FS_MSG, "%s: %s",
			idx == 3 ? "error" : "warning",
			(data && data->pMessage) ? data->pMessage : "(no message)");
		msg_head++;
	}
	pthread_mutex_unlock(&msg_mu);
	return 0; // VK_FALSE: do not abort the call
}

typedef fsVkResult (*fsPFN_CreateMessenger)(fsVkInstance, const fsDebugUtilsMessengerCreateInfo *, const void *,
	fsVkDebugUtilsMessenger *);
static void fill_messenger_info(void *p) {
	fsDebugUtilsMessengerCreateInfo *ci = p;
	memset(ci, 0, sizeof *ci);
	ci->sType = 1000128004;
	ci->messageSeverity = 0x100 | 0x1000; // WARNING | ERROR
	ci->messageType = 0x1 | 0x2 | 0x4;     // GENERAL | VALIDATION | PERFORMANCE
	ci->pfnUserCallback = fs_debug_callback;
}

fsVkResult fs_create_messenger(fsPFN create, fsVkInstance instance, fsVkDebugUtilsMessenger *out) {
	fsDebugUtilsMessengerCreateInfo ci;
	fill_messenger_info(&ci);
	return ((fsPFN_CreateMessenger)create)(instance, &ci, NULL, out);
}

typedef void (*fsPFN_DestroyMessenger)(fsVkInstance, fsVkDebugUtilsMessenger, const void *);
void fs_destroy_messenger(fsPFN destroy, fsVkInstance instance, fsVkDebugUtilsMessenger m) {
	((fsPFN_DestroyMessenger)destroy)(instance, m, NULL);
}

uint64_t fs_messages_count(int i) {
	pthread_mutex_lock(&msg_mu);
	uint64_t n = (i >= 0 && i < 4) ? msg_counts[i] : 0;
	pthread_mutex_unlock(&msg_mu);
	return n;
}

// fs_messages_head returns how many messages were ever kept: the index the
// next one gets.
uint64_t fs_messages_head(void) {
	pthread_mutex_lock(&msg_mu);
	uint64_t h = msg_head;
	pthread_mutex_unlock(&msg_mu);
	return h;
}

// fs_messages_at copies message i (an index below fs_messages_head) into
// buf, whether or not it was taken. It returns 0 when the ring no longer
// holds it.
int fs_messages_at(uint64_t i, char *buf, int buflen) {
	int ok = 0;
	pthread_mutex_lock(&msg_mu);
	if (i < msg_head && msg_head - i <= FS_RING) {
		snprintf(buf, (size_t)buflen, "%s", msg_ring[i % FS_RING]);
		ok = 1;
	}
	pthread_mutex_unlock(&msg_mu);
	return ok;
}

// fs_messages_take copies the oldest kept message into buf and drops it from
// the ring. It returns 0 when the ring is empty.
int fs_messages_take(char *buf, int buflen) {
	int ok = 0;
	pthread_mutex_lock(&msg_mu);
	if (msg_tail != msg_head) {
		snprintf(buf, (size_t)buflen, "%s", msg_ring[msg_tail % FS_RING]);
		msg_tail++;
		ok = 1;
	}
	pthread_mutex_unlock(&msg_mu);
	return ok;
}
