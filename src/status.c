#include "mpidht.h"

static const char *const status_messages[] = {
#define MPIDHT_STATUS_MESSAGE_(name, message) message,
    MPIDHT_STATUS_LIST(MPIDHT_STATUS_MESSAGE_)
#undef MPIDHT_STATUS_MESSAGE_
};

const char *mpidht_strerror(mpidht_status_t status)
{
    if ((int)status < 0 || (int)status >= (int)MPIDHT_STATUS_COUNT_)
        return "unknown status";
    return status_messages[status];
}
