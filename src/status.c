#include "mpidht.h"

const char *mpidht_strerror(mpidht_status_t status)
{
    switch (status) {
#define MPIDHT_STATUS_MESSAGE_(name, number, message)                          \
    case name:                                                                 \
        return message;
        MPIDHT_STATUS_LIST(MPIDHT_STATUS_MESSAGE_)
#undef MPIDHT_STATUS_MESSAGE_
    }
    return "unknown status";
}
